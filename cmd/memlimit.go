package cmd

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"

	"github.com/objgc/objgc/snapshot"
)

// mappedResident is how much of a mapped input a plan counts as resident
// outside the Go runtime's memory: the reader and the loops over objects
// release a mapped model's pages as they go (snapshot.ReadDocument),
// which keeps a few MiB of them in the resident set, more early in the
// reading, when the index is still small (docs/performance.md).
const mappedResident = 16 << 20

// programResident is what the objgc process keeps resident outside the Go
// runtime's count whatever its inputs: the program's own text and data
// pages, which the bound counts (it is on the process's resident set) and
// the runtime's memory limit does not.
const programResident = 8 << 20

// planMemoryLimit returns the soft memory limit, in bytes, that a plan of
// docs sets for the Go runtime (runtime/debug.SetMemoryLimit): the bound on
// a plan's peak resident memory, 1.5 times the inputs' size plus 64 MiB
// (docs/decisions.md, "A plan's memory"), less what a mapped input keeps
// resident outside the runtime's count (mappedResident, its size at most)
// and what the program itself does (programResident).
// Below the limit the collector keeps its usual pace (planGCPercent,
// renderGCPercent); near it, it collects more often rather than let the heap
// pass it. A plan whose live data nearly fills the limit gives it up
// (check).
func planMemoryLimit(docs []*snapshot.Document) int64 {
	var in planInputs
	for _, d := range docs {
		if d != nil {
			in.add(int64(len(d.Data)), d.Mapped())
		}
	}
	return in.limit()
}

// planFilesMemoryLimit is planMemoryLimit before the inputs are read,
// from their sizes, each taken as mapped (the lower limit); ok is false
// when one is standard input or not a regular file, whose size is known
// only once read.
func planFilesMemoryLimit(names ...string) (limit int64, ok bool) {
	var in planInputs
	for _, name := range names {
		if name == "" {
			continue
		}
		if name == "-" {
			return 0, false
		}
		st, err := os.Stat(name)
		if err != nil || !st.Mode().IsRegular() {
			return 0, false
		}
		in.add(st.Size(), true)
	}
	return in.limit(), true
}

// planInputs sums what planMemoryLimit counts of a plan's inputs.
type planInputs struct{ size, outside int64 }

// add counts an input of n bytes, mapped or read into memory.
func (in *planInputs) add(n int64, mapped bool) {
	in.size += n
	if mapped {
		in.outside += min(n, mappedResident)
	}
}

// limit returns the bound less what stays resident outside the runtime.
func (in *planInputs) limit() int64 {
	return in.size + in.size/2 + 64<<20 - in.outside - programResident
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

// memoryLimit is one run's part in the runtime's memory limit.
type memoryLimit struct {
	limit int64
	once  sync.Once
}

// setMemoryLimit sets the runtime's soft memory limit to limit bytes, or
// to the largest limit of the runs under way, unless GOMEMLIMIT is set in
// the environment (the user's choice is kept: the result is then nil,
// whose methods do nothing). restore takes it back.
func setMemoryLimit(limit int64) *memoryLimit {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return nil
	}
	m := &memoryLimits
	m.Lock()
	defer m.Unlock()
	if len(m.active) == 0 {
		m.saved = debug.SetMemoryLimit(-1) // -1 reads it
	}
	m.active = append(m.active, limit)
	debug.SetMemoryLimit(slices.Max(m.active))
	return &memoryLimit{limit: limit}
}

// restore takes back l's part in the runtime's limit; once is enough.
func (l *memoryLimit) restore() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		m := &memoryLimits
		m.Lock()
		defer m.Unlock()
		k := slices.Index(m.active, l.limit)
		m.active = slices.Delete(m.active, k, k+1)
		if len(m.active) == 0 {
			debug.SetMemoryLimit(m.saved)
			return
		}
		debug.SetMemoryLimit(slices.Max(m.active))
	})
}

// limitRoom is the share of a memory limit the live heap may take for
// the limit to stay: past it the collector would run nearly without pause
// for the little room left (a plan's live data only grows), at up to half
// the CPU (the runtime's cap), to keep a bound the plan cannot keep.
const limitRoom = 0.95

// check takes the limit back (restore) when the live heap is past
// limitRoom of it: the plan then runs at the collector's usual pace, over
// its bound rather than slower for nothing. The last collection's count
// may hold what a stage left behind (the ordering's arrays, during the
// ordering): past limitRoom, a collection now says what is live still.
func (l *memoryLimit) check() {
	if l == nil {
		return
	}
	room := uint64(float64(l.limit) * limitRoom)
	if liveHeap() <= room {
		return
	}
	runtime.GC()
	if liveHeap() > room {
		l.restore()
	}
}

// liveHeap returns the bytes of heap the last garbage collection found
// live (runtime/metrics /gc/heap/live:bytes), 0 if the runtime does not
// say.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// peakRSS returns the VmHWM line of /proc/self/status ("123456 kB"), the
// process's peak resident set, or "unknown" where there is none.
func peakRSS() string {
	if v := procStatusField("VmHWM"); v != "" {
		return v
	}
	return "unknown"
}

// procStatusField returns the value of field in /proc/self/status
// ("123456 kB" for VmHWM), "" where there is none.
func procStatusField(field string) string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
