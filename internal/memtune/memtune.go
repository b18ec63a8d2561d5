// Package memtune is objgc's one place that tunes the Go runtime's
// memory while a command runs: the garbage collector's target (what GOGC
// sets) and its soft memory limit (what GOMEMLIMIT sets). The rules are in
// docs/decisions.md, "A plan's memory":
//
//   - plan and apply hold a model and its index for their whole run: the
//     collector's target is 50 (the heap grows by half its live size
//     between collections, not by all of it), and 25 once the plan is
//     built and only written (Plan, Apply, Run.Render);
//   - a plan's soft memory limit is its bound, 1.5 times its inputs' size
//     plus 64 MiB, less what stays resident outside the runtime's count
//     (Plan, Run.Read); a plan whose live heap nearly fills the limit
//     gives it up (Run.Stage);
//   - a GOGC or GOMEMLIMIT set in the environment is the user's choice:
//     that setting is left alone.
//
// Each command calls one entry point, Plan or Apply, and Restore when it
// ends; every setting is then what it was before. Commands run in one
// process at once (tests run them in-process) share the runtime: it gets
// the lowest target and the largest limit of the runs under way, and the
// settings from before the first come back after the last.
package memtune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
)

// Garbage collector targets (debug.SetGCPercent).
const (
	// workPercent is the target while a plan or an apply works: they hold
	// the model and its index for their whole run, so the runtime's
	// default of 100 lets the heap of a model of small objects peak near
	// twice its live size; at 50 the peak is lower at the same CPU time.
	workPercent = 50
	// renderPercent is the target while a plan is written: the model, its
	// index and the plan are built by then and stay live to the end, and
	// writing adds only garbage (a few hundred bytes an object), so a
	// smaller headroom costs a few more collections of a heap that no
	// longer grows, for a lower peak on models of many tiny doomed objects.
	renderPercent = 25
)

// mappedResident is how much of a mapped input a plan counts as resident
// outside the Go runtime's memory: the reader and the loops over objects
// release a mapped model's pages as they go, which keeps a few MiB of
// them in the resident set, more early in the reading, when the index is
// still small.
const mappedResident = 16 << 20

// programResident is what the objgc process keeps resident outside the Go
// runtime's count whatever its inputs: the program's own text and data
// pages, which the bound counts (it is on the process's resident set) and
// the runtime's memory limit does not.
const programResident = 8 << 20

// limitRoom is the share of a memory limit the live heap may take for
// the limit to stay: past it the collector would run nearly without pause
// for the little room left (a plan's live data only grows), at up to half
// the CPU (the runtime's cap), to keep a bound the plan cannot keep.
const limitRoom = 0.95

// Input is one of a plan's inputs as its memory limit counts it: its size
// in bytes, and whether it is mapped (read from a file by mmap) rather
// than read into the Go heap.
type Input struct {
	Size   int64
	Mapped bool
}

// Run is one command's part in the runtime's tuning. Its methods are for
// the command's own goroutine; a nil *Run does nothing.
type Run struct {
	percent int   // its collector target; 0 when GOGC is set
	limit   int64 // its memory limit; 0 when none (yet, or given up)
	sized   bool  // the limit was set from the inputs' sizes (or GOMEMLIMIT is set)
	done    bool
}

// Plan starts a plan's tuning, before its inputs are read: the
// collector's target for the work, and the memory limit from the named
// files' sizes, each taken as mapped (the lower limit). Empty names are
// no input; when one is "-" (standard input) or not a regular file, whose
// size is known only once read, the limit waits for Read.
func Plan(files ...string) *Run {
	r := start(workPercent)
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		r.sized = true
		return r
	}
	var in []Input
	for _, name := range files {
		if name == "" {
			continue
		}
		if name == "-" {
			return r
		}
		st, err := os.Stat(name)
		if err != nil || !st.Mode().IsRegular() {
			return r
		}
		in = append(in, Input{Size: st.Size(), Mapped: true})
	}
	r.setLimit(Limit(in))
	return r
}

// Apply starts an apply's tuning: it too holds the plan's model and index
// for its whole run, and gets the collector's target for the work. It
// sets no memory limit.
func Apply() *Run { return start(workPercent) }

// Read sets the plan's memory limit from its inputs once read, when Plan
// could not from their files.
func (r *Run) Read(inputs []Input) {
	if r == nil || r.sized {
		return
	}
	r.setLimit(Limit(inputs))
}

// Stage is called as the plan enters each stage: when its live heap is
// past limitRoom of the limit, the limit is given up for the rest of the
// run, which then goes at the collector's usual pace, over its bound
// rather than slower for nothing. The last collection's count may hold
// what a stage left behind (the ordering's arrays, during the ordering):
// past limitRoom, a collection now says what is live still.
func (r *Run) Stage() {
	if r == nil || r.limit == 0 {
		return
	}
	room := uint64(float64(r.limit) * limitRoom)
	if liveHeap() <= room {
		return
	}
	runtime.GC()
	if liveHeap() > room {
		r.setLimit(0)
	}
}

// Render is called once the plan is built, before it is written: the
// collector's target for writing.
func (r *Run) Render() {
	if r == nil || r.percent == 0 || r.done {
		return
	}
	state.Lock()
	defer state.Unlock()
	r.percent = renderPercent
	state.applyPercent()
}

// Restore takes back r's part in the runtime's settings; once is enough.
func (r *Run) Restore() {
	if r == nil {
		return
	}
	state.Lock()
	defer state.Unlock()
	if r.done {
		return
	}
	r.done = true
	state.runs = slices.DeleteFunc(state.runs, func(o *Run) bool { return o == r })
	state.applyPercent()
	state.applyLimit()
}

// Limit returns the soft memory limit, in bytes, of a plan of inputs: the
// bound on its peak resident memory, 1.5 times the inputs' size plus
// 64 MiB, less what a mapped input keeps resident outside the runtime's
// count (mappedResident, its size at most) and what the program itself
// does (programResident).
func Limit(inputs []Input) int64 {
	var size, outside int64
	for _, in := range inputs {
		size += in.Size
		if in.Mapped {
			outside += min(in.Size, mappedResident)
		}
	}
	return size + size/2 + 64<<20 - outside - programResident
}

// settings are the runtime's settings shared by the runs under way, and
// what they were before the first.
type settings struct {
	sync.Mutex
	runs    []*Run
	percent saved // the collector's target (debug.SetGCPercent)
	limit   saved // the memory limit (debug.SetMemoryLimit)
}

// saved is one runtime setting that runs change: the value it had before
// the first of them, kept while any sets it.
type saved struct {
	before int64
	held   bool // before holds the value from before the runs
}

// apply sets the setting to want through set (which returns the value it
// replaces), keeping the value from before; with want 0 it puts that value
// back.
func (v *saved) apply(want int64, set func(int64) int64) {
	switch {
	case want > 0 && !v.held:
		v.before, v.held = set(want), true
	case want > 0:
		set(want)
	case v.held:
		set(v.before)
		v.held = false
	}
}

var state settings

// start adds a run of collector target percent, unless GOGC is set.
func start(percent int) *Run {
	r := &Run{percent: percent}
	if _, set := os.LookupEnv("GOGC"); set {
		r.percent = 0
	}
	state.Lock()
	defer state.Unlock()
	state.runs = append(state.runs, r)
	state.applyPercent()
	return r
}

// setLimit sets r's memory limit (0: none) and the runtime's.
func (r *Run) setLimit(limit int64) {
	state.Lock()
	defer state.Unlock()
	if r.done {
		return
	}
	r.limit, r.sized = limit, true
	state.applyLimit()
}

// applyPercent sets the runtime's collector target to the lowest of the
// runs under way, or back to the one before the first when none sets one.
func (s *settings) applyPercent() {
	percent := 0
	for _, r := range s.runs {
		if r.percent > 0 && (percent == 0 || r.percent < percent) {
			percent = r.percent
		}
	}
	s.percent.apply(int64(percent), func(v int64) int64 { return int64(debug.SetGCPercent(int(v))) })
}

// applyLimit sets the runtime's memory limit to the largest of the runs
// under way, or back to the one before the first when none sets one.
func (s *settings) applyLimit() {
	var limit int64
	for _, r := range s.runs {
		limit = max(limit, r.limit)
	}
	s.limit.apply(limit, debug.SetMemoryLimit)
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
