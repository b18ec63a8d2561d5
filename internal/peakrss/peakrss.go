// Package peakrss reads a process's own resident memory from
// /proc/self/status and resets its peak, for the in-process benchmarks
// that report a peak's growth over their input (Linux; elsewhere Reset
// reports false and Status 0, and the benchmarks leave the metric out).
package peakrss

import (
	"os"
	"strconv"
	"strings"
)

// Reset sets the process's peak resident set (VmHWM) to its current one
// by writing 5 to /proc/self/clear_refs. It reports whether it could.
func Reset() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// Status returns the field of /proc/self/status named field ("VmHWM",
// "VmRSS"), which the kernel gives in kB, in bytes; 0 when the file or
// the field is absent.
func Status(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			if fs := strings.Fields(v); len(fs) > 0 {
				kb, _ := strconv.ParseInt(fs[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}
