package jaegertest

import "syscall"

// dieWithParent has the kernel kill Jaeger when the test binary dies
// without running its cleanups (go test's timeout panic, a SIGKILL), so no
// server outlives the test process.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
