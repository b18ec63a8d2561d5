package cmd

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/objgc/objgc/snapshot"
)

// TestPlanMemoryLimit: the limit is the bound on the inputs of
// docs/decisions.md, "A plan's memory": 1.5 times their size plus 64 MiB,
// less what a mapped input keeps resident (at most mappedResident, at most
// its size) and what the program keeps resident (programResident).
func TestPlanMemoryLimit(t *testing.T) {
	small := snapshot.NewDocument("small.json", make([]byte, 10<<20))
	if got, want := planMemoryLimit([]*snapshot.Document{small}), int64(15<<20+64<<20-programResident); got != want {
		t.Errorf("a 10 MiB model in memory: limit %d, want %d", got, want)
	}
	if got, want := planMemoryLimit([]*snapshot.Document{small, small}), int64(30<<20+64<<20-programResident); got != want {
		t.Errorf("two 10 MiB inputs: limit %d, want %d", got, want)
	}
	name := filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(name, []byte(`{"Objects": null, "ObjectsCopy": null, "pad": "`+pad(2<<20)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := snapshot.ReadDocument(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer doc.Close()
	if !doc.Mapped() {
		t.Skip("a 2 MiB model is not mapped here")
	}
	n := int64(len(doc.Data))
	if got, want := planMemoryLimit([]*snapshot.Document{doc}), n+n/2+64<<20-n-programResident; got != want {
		t.Errorf("a mapped 2 MiB model: limit %d, want %d (its size counted resident)", got, want)
	}
}

func pad(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}

// TestSetMemoryLimit: runs under way at once share the largest of their
// limits, whatever order they end in, and the limit before the first is
// back after the last; GOMEMLIMIT in the environment is left alone.
func TestSetMemoryLimit(t *testing.T) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skip("GOMEMLIMIT is set")
	}
	before := debug.SetMemoryLimit(-1)
	current := func() int64 { return debug.SetMemoryLimit(-1) }
	a := setMemoryLimit(3 << 30)
	if current() != 3<<30 {
		t.Fatalf("limit %d, want 3 GiB", current())
	}
	b := setMemoryLimit(5 << 30)
	c := setMemoryLimit(4 << 30)
	if current() != 5<<30 {
		t.Fatalf("limit %d, want the largest, 5 GiB", current())
	}
	b.restore()
	b.restore() // twice is once
	if current() != 4<<30 {
		t.Fatalf("limit %d after the largest ended, want 4 GiB", current())
	}
	a.restore()
	if current() != 4<<30 {
		t.Fatalf("limit %d after 3 GiB ended, want 4 GiB", current())
	}
	c.restore()
	if current() != before {
		t.Fatalf("limit %d after all ended, want %d as before", current(), before)
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	d := setMemoryLimit(2 << 30)
	if current() != before {
		t.Errorf("limit %d with GOMEMLIMIT set, want it untouched", current())
	}
	d.restore()
}

// TestMemoryLimitCheck: a limit the live heap nearly fills is taken back
// (the collector would run without pause for nothing); one with room is
// kept.
func TestMemoryLimitCheck(t *testing.T) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skip("GOMEMLIMIT is set")
	}
	before := debug.SetMemoryLimit(-1)
	current := func() int64 { return debug.SetMemoryLimit(-1) }
	keep := make([]byte, 8<<20) // live across the collection below
	runtime.GC()
	if liveHeap() < 8<<20 {
		t.Fatalf("live heap %d after a collection holding 8 MiB", liveHeap())
	}
	roomy := setMemoryLimit(1 << 40)
	roomy.check()
	if current() != 1<<40 {
		t.Fatalf("a limit with room taken back: %d", current())
	}
	roomy.restore()
	full := setMemoryLimit(int64(liveHeap()))
	full.check()
	if current() != before {
		t.Fatalf("a limit the live heap fills kept: %d, want %d as before", current(), before)
	}
	full.restore() // a second time: nothing
	if current() != before {
		t.Fatalf("limit %d after restore, want %d", current(), before)
	}
	runtime.KeepAlive(keep)
	var none *memoryLimit // GOMEMLIMIT set: no part in the limit
	none.check()
	none.restore()
}
