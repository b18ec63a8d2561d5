package memtune

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
)

func currentLimit() int64 { return debug.SetMemoryLimit(-1) }

func currentPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// skipIfSet skips a test of the settings when the environment sets them:
// memtune then leaves them alone.
func skipIfSet(t *testing.T) {
	for _, v := range []string{"GOGC", "GOMEMLIMIT"} {
		if _, set := os.LookupEnv(v); set {
			t.Skip(v + " is set")
		}
	}
}

// TestLimit: the limit is the bound on the inputs of docs/decisions.md,
// "A plan's memory": 1.5 times their size plus 64 MiB, less what a mapped
// input keeps resident (at most mappedResident, at most its size) and
// what the program keeps resident (programResident).
func TestLimit(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []Input
		want int64
	}{
		{"a 10 MiB model in memory", []Input{{10 << 20, false}}, 15<<20 + 64<<20 - programResident},
		{"two 10 MiB inputs", []Input{{10 << 20, false}, {10 << 20, false}}, 30<<20 + 64<<20 - programResident},
		{"a mapped 2 MiB model", []Input{{2 << 20, true}}, 3<<20 + 64<<20 - 2<<20 - programResident},
		{"a mapped 100 MiB model", []Input{{100 << 20, true}}, 150<<20 + 64<<20 - mappedResident - programResident},
	} {
		if got := Limit(tc.in); got != tc.want {
			t.Errorf("%s: limit %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestPlan: a plan of files sets the limit from their sizes, each taken
// as mapped, and the collector's target 50, then 25 to render; Restore
// puts back both. Standard input waits for Read.
func TestPlan(t *testing.T) {
	skipIfSet(t)
	beforeLimit, beforePercent := currentLimit(), currentPercent()
	name := filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(name, make([]byte, 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	r := Plan(name, "")
	if got, want := currentLimit(), Limit([]Input{{2 << 20, true}}); got != want {
		t.Errorf("plan of a 2 MiB file: limit %d, want %d", got, want)
	}
	if got := currentPercent(); got != workPercent {
		t.Errorf("plan: target %d, want %d", got, workPercent)
	}
	r.Read([]Input{{1 << 30, false}}) // sized already: no change
	if got, want := currentLimit(), Limit([]Input{{2 << 20, true}}); got != want {
		t.Errorf("Read after the files' sizes: limit %d, want %d", got, want)
	}
	r.Render()
	if got := currentPercent(); got != renderPercent {
		t.Errorf("render: target %d, want %d", got, renderPercent)
	}
	r.Restore()
	r.Restore() // twice is once
	if currentLimit() != beforeLimit || currentPercent() != beforePercent {
		t.Errorf("after Restore: limit %d, target %d, want %d, %d as before", currentLimit(), currentPercent(), beforeLimit, beforePercent)
	}

	s := Plan("-")
	if currentLimit() != beforeLimit {
		t.Errorf("plan of standard input: limit %d before Read, want %d", currentLimit(), beforeLimit)
	}
	s.Read([]Input{{10 << 20, false}})
	if got, want := currentLimit(), Limit([]Input{{10 << 20, false}}); got != want {
		t.Errorf("plan of standard input: limit %d after Read, want %d", got, want)
	}
	s.Restore()
	if currentLimit() != beforeLimit || currentPercent() != beforePercent {
		t.Errorf("after Restore: limit %d, target %d, want %d, %d as before", currentLimit(), currentPercent(), beforeLimit, beforePercent)
	}
}

// TestApply: apply sets the collector's target 50 and no limit.
func TestApply(t *testing.T) {
	skipIfSet(t)
	beforeLimit, beforePercent := currentLimit(), currentPercent()
	r := Apply()
	if currentPercent() != workPercent || currentLimit() != beforeLimit {
		t.Errorf("apply: target %d, limit %d, want %d, %d", currentPercent(), currentLimit(), workPercent, beforeLimit)
	}
	r.Restore()
	if currentPercent() != beforePercent {
		t.Errorf("after Restore: target %d, want %d", currentPercent(), beforePercent)
	}
}

// TestRunsUnderWay: runs under way at once share the largest of their
// limits and the lowest of their targets, whatever order they end in, and
// the settings before the first are back after the last.
func TestRunsUnderWay(t *testing.T) {
	skipIfSet(t)
	beforeLimit, beforePercent := currentLimit(), currentPercent()
	run := func(limit int64) *Run {
		r := start(workPercent)
		r.setLimit(limit)
		return r
	}
	a := run(3 << 30)
	if currentLimit() != 3<<30 {
		t.Fatalf("limit %d, want 3 GiB", currentLimit())
	}
	b := run(5 << 30)
	c := run(4 << 30)
	if currentLimit() != 5<<30 {
		t.Fatalf("limit %d, want the largest, 5 GiB", currentLimit())
	}
	c.Render()
	b.Restore()
	if currentLimit() != 4<<30 {
		t.Fatalf("limit %d after the largest ended, want 4 GiB", currentLimit())
	}
	if currentPercent() != renderPercent {
		t.Fatalf("target %d with one run rendering, want the lowest, %d", currentPercent(), renderPercent)
	}
	c.Restore()
	if currentLimit() != 3<<30 || currentPercent() != workPercent {
		t.Fatalf("limit %d, target %d after 4 GiB ended, want 3 GiB, %d", currentLimit(), currentPercent(), workPercent)
	}
	a.Restore()
	if currentLimit() != beforeLimit || currentPercent() != beforePercent {
		t.Fatalf("after all ended: limit %d, target %d, want %d, %d as before", currentLimit(), currentPercent(), beforeLimit, beforePercent)
	}
}

// TestUserSettingsKept: a GOGC or GOMEMLIMIT in the environment is the
// user's choice: memtune leaves that setting alone.
func TestUserSettingsKept(t *testing.T) {
	skipIfSet(t)
	beforeLimit, beforePercent := currentLimit(), currentPercent()
	t.Run("GOMEMLIMIT", func(t *testing.T) {
		t.Setenv("GOMEMLIMIT", "1GiB")
		r := Plan("-")
		defer r.Restore()
		r.Read([]Input{{10 << 20, false}})
		if currentLimit() != beforeLimit || currentPercent() != workPercent {
			t.Errorf("limit %d, target %d, want %d untouched, %d", currentLimit(), currentPercent(), beforeLimit, workPercent)
		}
	})
	t.Run("GOGC", func(t *testing.T) {
		t.Setenv("GOGC", "200")
		r := Plan("-")
		defer r.Restore()
		r.Read([]Input{{10 << 20, false}})
		r.Render()
		if currentPercent() != beforePercent || currentLimit() == beforeLimit {
			t.Errorf("target %d, limit %d, want %d untouched and a limit", currentPercent(), currentLimit(), beforePercent)
		}
	})
	if currentLimit() != beforeLimit || currentPercent() != beforePercent {
		t.Errorf("after Restore: limit %d, target %d, want %d, %d", currentLimit(), currentPercent(), beforeLimit, beforePercent)
	}
}

// TestStage: a limit the live heap nearly fills is given up (the
// collector would run without pause for nothing); one with room is kept.
func TestStage(t *testing.T) {
	skipIfSet(t)
	beforeLimit := currentLimit()
	keep := make([]byte, 8<<20) // live across the collection below
	runtime.GC()
	if liveHeap() < 8<<20 {
		t.Fatalf("live heap %d after a collection holding 8 MiB", liveHeap())
	}
	roomy := start(workPercent)
	roomy.setLimit(1 << 40)
	roomy.Stage()
	if currentLimit() != 1<<40 {
		t.Fatalf("a limit with room given up: %d", currentLimit())
	}
	roomy.Restore()
	full := start(workPercent)
	full.setLimit(int64(liveHeap()))
	full.Stage()
	if currentLimit() != beforeLimit {
		t.Fatalf("a limit the live heap fills kept: %d, want %d as before", currentLimit(), beforeLimit)
	}
	full.Restore()
	if currentLimit() != beforeLimit {
		t.Fatalf("limit %d after Restore, want %d", currentLimit(), beforeLimit)
	}
	runtime.KeepAlive(keep)
	var none *Run
	none.Stage()
	none.Render()
	none.Read(nil)
	none.Restore()
}
