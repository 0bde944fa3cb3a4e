module github.com/mcptrace/mcptrace/internal/benchtools/simdparse

go 1.26.0

require github.com/minio/simdjson-go v0.4.5

require (
	github.com/klauspost/compress v1.15.15 // indirect
	github.com/klauspost/cpuid/v2 v2.2.3 // indirect
	golang.org/x/sys v0.0.0-20220704084225-05e143d24a9e // indirect
)
