package main

import (
	"errors"
	"fmt"

	"github.com/mcptrace/mcptrace/internal/profiling"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// addProfileFlags registers --cpuprofile and --memprofile on a command
// that reads dumps: the run's own pprof profiles, for a user who asks why
// a read is slow and for the bench scripts' breakdown by phase (the
// analyzer labels its goroutines with pprof label "phase": read, decode,
// index, finalize, observe, merge, compact).
func addProfileFlags(fl *pflag.FlagSet) {
	fl.String("cpuprofile", "", "write a CPU profile of the run to FILE (pprof; its samples carry the analyzer's phase label: go tool pprof -tags FILE)")
	fl.String("memprofile", "", "write a heap profile at the end of the run to FILE (pprof)")
	fl.String("exectrace", "", "write an execution trace of the run to FILE (runtime/trace; its regions are the analyzer's phases: when the cores idled and what each phase waited for)")
}

// withProfiles wraps cmd's RunE so that the profiles its flags ask for
// cover the whole run, and are written whole (internal/outfile) even when
// the run fails, which is when one is wanted most.
func withProfiles(cmd *cobra.Command) {
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		stop, err := startProfiles(c)
		if err != nil {
			return err
		}
		err = run(c, args)
		return errors.Join(err, stop())
	}
}

// startProfiles starts the CPU profile --cpuprofile names and returns the
// function that stops it and writes --memprofile's heap profile, both
// through internal/profiling, as the live demo profiles.
func startProfiles(c *cobra.Command) (stop func() error, err error) {
	cpuPath, _ := c.Flags().GetString("cpuprofile")
	memPath, _ := c.Flags().GetString("memprofile")
	tracePath, _ := c.Flags().GetString("exectrace")
	stopCPU := func() error { return nil }
	if cpuPath != "" {
		if stopCPU, err = profiling.StartCPU(cpuPath); err != nil {
			return nil, usageErrorf("--cpuprofile: %w", err)
		}
	}
	stopTrace := func() error { return nil }
	if tracePath != "" {
		if stopTrace, err = profiling.StartTrace(tracePath); err != nil {
			return nil, errors.Join(usageErrorf("--exectrace: %w", err), stopCPU())
		}
	}
	return func() error {
		var errs []error
		if err := stopTrace(); err != nil {
			errs = append(errs, fmt.Errorf("--exectrace: %w", err))
		}
		if err := stopCPU(); err != nil {
			errs = append(errs, fmt.Errorf("--cpuprofile: %w", err))
		}
		if memPath != "" {
			if err := profiling.WriteHeap(memPath); err != nil {
				errs = append(errs, fmt.Errorf("--memprofile: %w", err))
			}
		}
		return errors.Join(errs...)
	}, nil
}
