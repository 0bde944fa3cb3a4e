//go:build !unix

package outfile

import "os"

// lockTemp takes no lock where flock(2) is not: nil.
func lockTemp(*os.Root, string) *os.File { return nil }

// removeStale removes nothing where no lock tells a live writer's
// temporary file from a dead one's.
func removeStale(*os.Root, string) {}
