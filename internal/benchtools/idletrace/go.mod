module github.com/mcptrace/mcptrace/internal/benchtools/idletrace

go 1.26.0

require golang.org/x/exp v0.0.0-20261120182113-8801fbdfac81
