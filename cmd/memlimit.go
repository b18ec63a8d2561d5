package cmd

import (
	"os"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/objgc/objgc/snapshot"
)

// mappedResident is how much of a mapped input a plan counts as resident
// outside the Go runtime's memory: the reader and the loops over objects
// release a mapped model's pages as they go (snapshot.Document.Release),
// which keeps about 10 MiB of them in the resident set.
const mappedResident = 16 << 20

// planMemoryLimit returns the soft memory limit, in bytes, that a plan of
// docs sets for the Go runtime (runtime/debug.SetMemoryLimit): the bound
// on a plan's peak resident memory, 1.5 times the inputs' size plus 64
// MiB (issue 9), less what a mapped input keeps resident outside the
// runtime's count (mappedResident, its size at most). Below the limit
// the collector keeps its usual pace (planGCPercent, renderGCPercent);
// near it, it collects more often rather than let the heap pass it. A
// plan whose live data alone passes the limit still runs, with the
// collector's share of CPU capped by the runtime, at most half.
func planMemoryLimit(docs []*snapshot.Document) int64 {
	var size, outside int64
	for _, d := range docs {
		if d == nil {
			continue
		}
		n := int64(len(d.Data))
		size += n
		if d.Mapped() {
			outside += min(n, mappedResident)
		}
	}
	return size + size/2 + 64<<20 - outside
}

// memoryLimits are the limits of the plans under way in the process
// (Main runs in-process in tests, several at once): the runtime's limit is
// the largest of them, and the one before the first is put back after
// the last.
var memoryLimits struct {
	sync.Mutex
	active []int64
	saved  int64
}

// setMemoryLimit sets the runtime's soft memory limit to limit bytes, or
// to the largest limit of the runs under way, unless GOMEMLIMIT is set in
// the environment (the user's choice is kept), and returns what takes it
// back.
func setMemoryLimit(limit int64) (restore func()) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return func() {}
	}
	m := &memoryLimits
	m.Lock()
	defer m.Unlock()
	if len(m.active) == 0 {
		m.saved = debug.SetMemoryLimit(-1) // -1 reads it
	}
	m.active = append(m.active, limit)
	debug.SetMemoryLimit(slices.Max(m.active))
	var once sync.Once
	return func() {
		once.Do(func() {
			m.Lock()
			defer m.Unlock()
			m.active = slices.Delete(m.active, slices.Index(m.active, limit), slices.Index(m.active, limit)+1)
			if len(m.active) == 0 {
				debug.SetMemoryLimit(m.saved)
				return
			}
			debug.SetMemoryLimit(slices.Max(m.active))
		})
	}
}
