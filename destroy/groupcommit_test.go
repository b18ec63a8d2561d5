package destroy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
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
			errs <- j.Append(StateChange{ID: fmt.Sprintf("o%d", w), To: StateDoomed})
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
	mustWrite := func(r Record) {
		t.Helper()
		if _, err := j.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(StateChange{ID: "o", To: StateDoomed})
	mustWrite(StateChange{ID: "o", To: StateNotified})
	mustWrite(StateChange{ID: "o", To: StateDestroying})
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
	mustWrite(StateChange{ID: "o", To: StateFailed})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if lines := readLines(t, path); len(lines) != 6 || *syncs != 1 {
		t.Errorf("after Close: %d lines, %d fsyncs; want 6 and 1", len(lines), *syncs)
	}
}

// groupModel: env keeps living; app a (class A) owns three instances
// (class I), so the instances are destroyed in one group and a after them
// in the next.
const groupSnapshot = `{"?": {"id": "env", "type": "E"}, "apps": [
  {"?": {"id": "a", "type": "A"}, "instances": [
    {"?": {"id": "i1", "type": "I"}}, {"?": {"id": "i2", "type": "I"}}, {"?": {"id": "i3", "type": "I"}}]}]}`

func applyGroups(t *testing.T, hooks bool) (j *Journal, journal, trace string, syncs *int64) {
	t.Helper()
	p := planJSON(t, groupSnapshot, `{"?": {"id": "env", "type": "E"}, "apps": []}`)
	if got := fmt.Sprint(groupIDs(p)); got != "[[i1 i2 i3] [a]]" {
		t.Fatalf("groups %s, want [[i1 i2 i3] [a]]", got)
	}
	dir := t.TempDir()
	trace = filepath.Join(dir, "trace")
	if hooks {
		for _, class := range []string{"A", "I"} {
			script := "#!/bin/sh\necho \"start $OBJGC_OBJECT_ID\" >> \"$TRACE\"\n"
			if err := os.MkdirAll(filepath.Join(dir, "hooks", class), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "hooks", class, "destroy"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	journal = JournalPath(filepath.Join(dir, "model.json"))
	j, res, err := OpenJournal(journal, testInputs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	// Each fsync appends "synced <bytes>" to the trace, where the hooks
	// append "start <id>": the trace's order is the order of the events.
	var mu sync.Mutex
	syncs = countFsyncs(j, func(size int64) {
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(trace, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			fmt.Fprintf(f, "synced %d\n", size)
			f.Close()
		}
	})
	r, err := Apply(context.Background(), p, ApplyOptions{
		Finder:      &HookFinder{Dirs: []string{filepath.Join(dir, "hooks")}},
		Parallelism: 3,
		Env:         append(os.Environ(), "TRACE="+trace),
		Journal:     j,
		Resume:      res,
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := r.Count(OutcomeDestroyed); n != 4 {
		t.Fatalf("%d objects destroyed, want 4", n)
	}
	return j, journal, trace, syncs
}

// TestApplyWithoutHooksDoesNotSync: objects without hooks cost no fsync:
// Apply writes their 16 state changes and syncs none of them; Close (or
// the write-back's committing record) makes them durable with one fsync.
func TestApplyWithoutHooksDoesNotSync(t *testing.T) {
	j, journal, _, syncs := applyGroups(t, false)
	if *syncs != 0 {
		t.Errorf("Apply of 4 objects without hooks made %d fsyncs, want 0", *syncs)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if lines := readLines(t, journal); len(lines) != 1+4*4 || *syncs != 1 {
		t.Errorf("after Close: %d records, %d fsyncs; want 16 (doomed, notified, destroying, destroyed each) and 1", len(lines)-1, *syncs)
	}
}

// TestApplySyncsBeforeDependentHook: a's destroy hook depends on the
// destruction of i1, i2 and i3 (the group before): when it starts, every
// record about them is durable. The instances' hooks, in one group, need
// no fsync before they start beyond the one for the records before their
// group.
func TestApplySyncsBeforeDependentHook(t *testing.T) {
	j, journal, trace, syncs := applyGroups(t, true)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	// The end offset of the last record about an instance before a's
	// start record.
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	var off, need int64
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		off += int64(len(sc.Bytes())) + 1
		if off == int64(len(sc.Bytes()))+1 {
			continue // the header
		}
		_, rec, err := decodeRecord(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if h, ok := rec.(HookStart); ok && h.Key.ID == "a" {
			break
		}
		var id string
		switch r := rec.(type) {
		case StateChange:
			id = r.ID
		case HookStart:
			id = r.Key.ID
		case HookEnd:
			id = r.Key.ID
		}
		if strings.HasPrefix(id, "i") {
			need = off
		}
	}
	tr, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var durable int64 = -1
	starts := 0
	for _, l := range strings.Split(strings.TrimSpace(string(tr)), "\n") {
		if s, ok := strings.CutPrefix(l, "synced "); ok {
			durable, _ = strconv.ParseInt(s, 10, 64)
			continue
		}
		starts++
		if l == "start a" && durable < need {
			t.Errorf("a's hook started when %d bytes of the journal were durable; the records of i1, i2, i3 end at %d\ntrace:\n%s", durable, need, tr)
		}
	}
	if starts != 4 {
		t.Errorf("%d hooks started, want 4\ntrace:\n%s", starts, tr)
	}
	// The four end records are fsynced in the background, shared when
	// hooks end together; the barriers before each group add at most one
	// each; Close one more.
	if *syncs > 4+2+1 {
		t.Errorf("%d fsyncs for 4 hooks", *syncs)
	}
}
