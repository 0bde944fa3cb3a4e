package ingest

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// pinnedCPUs returns the first two CPUs the process may run on, or false
// when it may run on fewer.
func pinnedCPUs() ([2]int, bool) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return [2]int{}, false
	}
	var cpus [2]int
	n := 0
	for c := 0; c < len(set)*64 && n < 2; c++ {
		if set.IsSet(c) {
			cpus[n] = c
			n++
		}
	}
	return cpus, n == 2
}

// pinThread locks the calling goroutine to its thread and the thread to
// cpu, and returns what undoes both: the scheduler would otherwise move
// the benchmark's two goroutines onto one core or apart from run to run,
// and what crosses between cores with them.
func pinThread(cpu int) (unpin func(), err error) {
	runtime.LockOSThread()
	var was, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	one.Set(cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return func() {
		_ = unix.SchedSetaffinity(0, &was)
		runtime.UnlockOSThread()
	}, nil
}
