//go:build !linux

package engine

// hugePagesAdvisable is false off Linux: there is no transparent huge page
// advice to give.
func hugePagesAdvisable() bool { return false }

// adviseHugePages does nothing off Linux.
func adviseHugePages([]byte) {}
