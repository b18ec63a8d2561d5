package journal

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// countFsyncs replaces j's fsync with one that counts and, when each is
// not nil, calls it first (with the file's size before the fsync: every
// byte up to it is durable once the fsync returns).
func countFsyncs(j *Journal, each func(size int64)) *int64 {
	var n int64
	j.fsync = func(f *os.File) error {
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		n++ // one fsync at a time: Sync runs them under its syncing flag
		if each != nil {
			each(fi.Size())
		}
		return nil
	}
	return &n
}

// TestJournalGroupCommit: eight goroutines Append (write and wait until
// durable) while the first fsync is held until all eight records are
// written. The first fsync covers what was written when it began; the
// seven others wait, and one more fsync covers all of them: two fsyncs
// for eight durable records, not eight.
func TestJournalGroupCommit(t *testing.T) {
	j, path := openNew(t)
	const writers = 8
	var n int64
	first := true
	j.fsync = func(f *os.File) error {
		if first {
			first = false
			for j.Written() < writers { // every writer has written its record
				runtime.Gosched()
			}
		}
		n++
		return f.Sync()
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- j.writeSync(stateChange{ID: fmt.Sprintf("o%d", w), To: StateDoomed})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n != 2 {
		t.Errorf("%d fsyncs for %d concurrent Appends, want 2 (the first, then one for the seven that waited on it)", n, writers)
	}
	if lines := readLines(t, path); len(lines) != 1+writers {
		t.Errorf("%d lines, want the header and %d records", len(lines), writers)
	}
	// Durable records need no fsync of their own.
	if err := j.Sync(writers); err != nil || n != 2 {
		t.Errorf("Sync of durable records: %v, %d fsyncs", err, n)
	}
}

// TestJournalWriteThenClose: state changes written without a sync are in
// the file after Close, which fsyncs them; a hook record is in the file as
// soon as Write returns (it survives the death of the process).
func TestJournalWriteThenClose(t *testing.T) {
	j, path := openNew(t)
	syncs := countFsyncs(j, nil)
	mustWrite := func(r record) {
		t.Helper()
		if _, err := j.write(r); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(stateChange{ID: "o", To: StateDoomed})
	mustWrite(stateChange{ID: "o", To: StateNotified})
	mustWrite(stateChange{ID: "o", To: StateDestroying})
	if lines := readLines(t, path); len(lines) != 1 {
		t.Errorf("state changes reached the file before a hook record, Sync or Close: %q", lines)
	}
	k := HookKey{Hook: "/h", Event: "destroy", ID: "o"}
	if err := j.HookStarted(k); err != nil {
		t.Fatal(err)
	}
	if lines := readLines(t, path); len(lines) != 5 || !strings.Contains(lines[4], `"phase":"start"`) {
		t.Errorf("after a start record the file holds %q, want it and the state changes before it", lines)
	}
	if *syncs != 0 {
		t.Errorf("%d fsyncs for state changes and a start record, want none", *syncs)
	}
	mustWrite(stateChange{ID: "o", To: StateFailed})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if lines := readLines(t, path); len(lines) != 6 || *syncs != 1 {
		t.Errorf("after Close: %d lines, %d fsyncs; want 6 and 1", len(lines), *syncs)
	}
}
