package destroy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/objgc/objgc/destroy/journal"
	"github.com/objgc/objgc/internal/plantest"
)

// groupModel: env keeps living; app a (class A) owns three instances
// (class I), so the instances are destroyed in one group and a after them
// in the next.
const groupSnapshot = `{"?": {"id": "env", "type": "E"}, "apps": [
  {"?": {"id": "a", "type": "A"}, "instances": [
    {"?": {"id": "i1", "type": "I"}}, {"?": {"id": "i2", "type": "I"}}, {"?": {"id": "i3", "type": "I"}}]}]}`

// applyGroups applies groupSnapshot's removal with a journal whose fsyncs
// are counted and logged to trace (see below).
func applyGroups(t *testing.T, hooks bool) (j *journal.Journal, path, trace string, syncs *int64) {
	t.Helper()
	p := plantest.Plan(t, groupSnapshot, `{"?": {"id": "env", "type": "E"}, "apps": []}`)
	if got := fmt.Sprint(plantest.GroupIDs(p)); got != "[[i1 i2 i3] [a]]" {
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
	path = journal.PathFor(filepath.Join(dir, "model.json"))
	j, res, err := journal.Open(path, testInputs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	// Each fsync appends "synced <bytes>" to the trace, where the hooks
	// append "start <id>": the trace's order is the order of the events.
	var n int64
	syncs = &n
	j.OnSync(func(size int64) {
		n++ // one fsync at a time: the journal runs them under its syncing flag
		f, err := os.OpenFile(trace, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			fmt.Fprintf(f, "synced %d\n", size)
			f.Close()
		}
	})
	r, err := applyPlan(context.Background(), p, ApplyOptions{
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
	return j, path, trace, syncs
}

// TestApplyWithoutHooksDoesNotSync: objects without hooks cost no fsync:
// applyPlan writes their 16 state changes and syncs none of them; Close (or
// the write-back's committing record) makes them durable with one fsync.
func TestApplyWithoutHooksDoesNotSync(t *testing.T) {
	j, path, _, syncs := applyGroups(t, false)
	if *syncs != 0 {
		t.Errorf("applyPlan of 4 objects without hooks made %d fsyncs, want 0", *syncs)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if lines := readLines(t, path); len(lines) != 1+4*4 || *syncs != 1 {
		t.Errorf("after Close: %d records, %d fsyncs; want 16 (doomed, notified, destroying, destroyed each) and 1", len(lines)-1, *syncs)
	}
}

// TestApplySyncsBeforeDependentHook: a's destroy hook depends on the
// destruction of i1, i2 and i3 (the group before): when it starts, every
// record about them is durable. The instances' hooks, in one group, need
// no fsync before they start beyond the one for the records before their
// group.
func TestApplySyncsBeforeDependentHook(t *testing.T) {
	j, path, trace, syncs := applyGroups(t, true)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	// The end offset of the last record about an instance before a's
	// start record.
	data, err := os.ReadFile(path)
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
		var rec struct{ ID, Phase string } // every record about an object has its id
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Phase == "start" && rec.ID == "a" {
			break
		}
		if strings.HasPrefix(rec.ID, "i") {
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
