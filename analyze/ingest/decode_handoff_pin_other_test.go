//go:build !linux

package ingest

import "errors"

// pinnedCPUs reports false: pinning threads to CPUs is Linux's here.
func pinnedCPUs() ([2]int, bool) { return [2]int{}, false }

// pinThread is not available off Linux.
func pinThread(int) (func(), error) { return nil, errors.New("pinning a thread to a CPU needs Linux") }
