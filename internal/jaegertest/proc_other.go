//go:build !linux

package jaegertest

import "syscall"

// dieWithParent is nil where the kernel cannot kill a child with its
// parent: the test's cleanup alone stops Jaeger there.
func dieWithParent() *syscall.SysProcAttr { return nil }
