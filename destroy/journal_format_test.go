package destroy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixtureInputs are the inputs the journals in testdata/journal were
// written for.
var fixtureInputs = []JournalInput{{Path: "model.json", SHA256: "6a8a6f0e2b1ed1b6e1b0c8b5b61e3dbd3c9b5a2bf0c3a1d4f2e6b8a9c7d5e3f1"}}

// copyFixture copies testdata/journal/name to a temporary folder and
// returns its path there. A missing fixture fails the test.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "journal", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.json.journal")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestJournalFormatV1: a journal that a run of an earlier build left
// behind when it was killed (testdata/journal/v1-crashed.journal, written
// by that build: every kind of record but the commit ones, a hook end
// with a patch, one without an exit status, a hook with no end) is
// resumed with every state, result and unfinished hook it records.
func TestJournalFormatV1(t *testing.T) {
	path := copyFixture(t, "v1-crashed.journal")
	j, res, err := OpenJournal(path, fixtureInputs)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if !res.Resumed || res.PID != 23414 || len(res.Notes) != 0 {
		t.Errorf("resume %+v, want resumed, pid 23414, no notes", res)
	}
	wantStates := map[string]State{"vm-1": StateDestroyed, "net-1": StateFailed, "vol-1": StateDestroying}
	if !reflect.DeepEqual(res.States, wantStates) {
		t.Errorf("States = %v, want %v", res.States, wantStates)
	}
	notify := HookKey{Hook: "/hooks/io.murano.Environment/notify/onVmDestroyed", Event: "onVmDestroyed", ID: "vm-1", Subscriber: "env-1"}
	wantDone := map[HookKey]HookResult{
		notify: {OK: true, Exit: 0, Patch: json.RawMessage(`{"vms":null,"status":"ok"}`)},
		{Hook: "/hooks/io.murano.resources.Instance/destroy", Event: "destroy", ID: "vm-1"}: {OK: true, Exit: 0},
		{Hook: "/hooks/io.murano.resources.Network/destroy", Event: "destroy", ID: "net-1"}: {OK: false, Exit: -1},
	}
	if !reflect.DeepEqual(res.Done, wantDone) {
		t.Errorf("Done = %v, want %v", res.Done, wantDone)
	}
	wantUnfinished := []HookKey{{Hook: "/hooks/io.murano.resources.Volume/destroy", Event: "destroy", ID: "vol-1"}}
	if !reflect.DeepEqual(res.Unfinished, wantUnfinished) {
		t.Errorf("Unfinished = %v, want %v", res.Unfinished, wantUnfinished)
	}
	// The resumed journal goes on in the same format.
	if err := j.SetState("vol-1", StateFailed); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if last := lines[len(lines)-1]; last != `{"seq":19,"id":"vol-1","from":"destroying","to":"failed"}` {
		t.Errorf("record appended to the resumed journal: %s", last)
	}
}

// TestJournalFormatV1Committed: a journal of an earlier build whose run
// committed its write-back (testdata/journal/v1-committed.journal: a
// committing and a commit record) is finished: it is replaced, with a
// note.
func TestJournalFormatV1Committed(t *testing.T) {
	path := copyFixture(t, "v1-committed.journal")
	j, res, err := OpenJournal(path, fixtureInputs)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if res.Resumed || len(res.States) != 0 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "completed its write-back") {
		t.Errorf("resume %+v, want a replaced journal with one note", res)
	}
}
