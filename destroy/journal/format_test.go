package journal

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixtureInputs are the inputs the journals in testdata were
// written for.
var fixtureInputs = []Input{{Path: "model.json", SHA256: "6a8a6f0e2b1ed1b6e1b0c8b5b61e3dbd3c9b5a2bf0c3a1d4f2e6b8a9c7d5e3f1"}}

// copyFixture copies testdata/name to a temporary folder and
// returns its path there. A missing fixture fails the test.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
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
// behind when it was killed (testdata/v1-crashed.journal, written
// by that build: every kind of record but the commit ones, a hook end
// with a patch, one without an exit status, a hook with no end) is
// resumed with every state, result and unfinished hook it records.
func TestJournalFormatV1(t *testing.T) {
	path := copyFixture(t, "v1-crashed.journal")
	j, res, err := Open(path, fixtureInputs)
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
// committed its write-back (testdata/v1-committed.journal: a
// committing and a commit record) is finished: it is replaced, with a
// note.
func TestJournalFormatV1Committed(t *testing.T) {
	path := copyFixture(t, "v1-committed.journal")
	j, res, err := Open(path, fixtureInputs)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if res.Resumed || len(res.States) != 0 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "completed its write-back") {
		t.Errorf("resume %+v, want a replaced journal with one note", res)
	}
}

// currentInputs are the inputs the v1-current-* journals were written
// for: the sha256 of "model.json of the fixture\n".
var currentInputs = []Input{{Path: "model.json", SHA256: "52b463762ca66b44c782157a26ceba1d16d0c8f2d98a4f7342079d2de6f26a75"}}

// TestJournalFormatCurrent: journals written through Open,
// SetState, HookStarted, EndHook, Committing, Commit and Close by the
// build before the records were typed (commit 6528557;
// testdata/v1-current-*.journal: every kind of record, a hook
// end with a patch, one without an exit status, a failed hook retried,
// a hook with no end) replay to the same states, results and unfinished
// hooks, and every line encodes back to the same bytes.
func TestJournalFormatCurrent(t *testing.T) {
	path := copyFixture(t, "v1-current-crashed.journal")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	kinds := map[recordKind]int{}
	for i, line := range lines[1:] {
		seq, rec, err := decodeRecord([]byte(line))
		if err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		kinds[rec.kind()]++
		again, err := encodeRecord(seq, rec)
		if err != nil || string(again) != line {
			t.Errorf("line %d encodes back to %s (%v), want %s", i+2, again, err, line)
		}
	}
	want := map[recordKind]int{kindState: 15, kindHookStart: 5, kindHookEnd: 4, kindCommitting: 1}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("records by kind %v, want %v", kinds, want)
	}

	j, res, err := Open(path, currentInputs)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if !res.Resumed || res.PID != 18303 || len(res.Notes) != 0 {
		t.Errorf("resume %+v, want resumed, pid 18303, no notes", res)
	}
	wantStates := map[string]State{"vm-1": StateDestroyed, "net-1": StateFailed, "vol-1": StateDestroying}
	if !reflect.DeepEqual(res.States, wantStates) {
		t.Errorf("States = %v, want %v", res.States, wantStates)
	}
	net := HookKey{Hook: "/hooks/io.murano.resources.Network/destroy", Event: "destroy", ID: "net-1"}
	wantDone := map[HookKey]HookResult{
		{Hook: "/hooks/io.murano.Environment/notify/onVmDestroyed", Event: "onVmDestroyed", ID: "vm-1", Subscriber: "env-1"}: {OK: true, Exit: 0, Patch: json.RawMessage(`{"vms":null,"status":"ok"}`)},
		{Hook: "/hooks/io.murano.resources.Instance/destroy", Event: "destroy", ID: "vm-1"}:                                  {OK: true, Exit: 0},
		net: {OK: false, Exit: 3}, // the retry's result
	}
	if !reflect.DeepEqual(res.Done, wantDone) {
		t.Errorf("Done = %v, want %v", res.Done, wantDone)
	}
	vol := HookKey{Hook: "/hooks/io.murano.resources.Volume/destroy", Event: "destroy", ID: "vol-1"}
	if !reflect.DeepEqual(res.Unfinished, []HookKey{vol}) {
		t.Errorf("Unfinished = %v, want %v", res.Unfinished, []HookKey{vol})
	}
	// The committing record's output does not hold its content (there is
	// no /srv/murano/model.json here): the run is resumed, and goes on in
	// the same format.
	if _, err := j.EndHook(vol, HookResult{OK: true, Exit: 0}); err != nil {
		t.Fatal(err)
	}
	if err := j.SetState("vol-1", StateDestroyed); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wantTail := `{"seq":26,"hook":"/hooks/io.murano.resources.Volume/destroy","event":"destroy","id":"vol-1","phase":"end","exit":0,"ok":true}` + "\n" +
		`{"seq":27,"id":"vol-1","from":"destroying","to":"destroyed"}` + "\n"
	if !strings.HasSuffix(string(data), wantTail) {
		t.Errorf("records appended to the resumed journal:\n%s\nwant them to end with:\n%s", data, wantTail)
	}

	// The journal of a run that committed is finished: replaced, with a
	// note.
	path = copyFixture(t, "v1-current-committed.journal")
	j2, res, err := Open(path, currentInputs)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if res.Resumed || len(res.States) != 0 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "started 2026-11-23T18:25:08Z by pid 18303 that had completed its write-back") {
		t.Errorf("resume %+v, want a replaced journal with one note", res)
	}
}

// TestEncodeStateChange compares the direct encoding of state changes with
// json.Marshal of the wire record, for plain ids and ids that need
// escapes.
func TestEncodeStateChange(t *testing.T) {
	for _, id := range []string{"", "a", "9acb04420000000178629a0f5f3f164f", `q"uote`, `back\slash`, "<b>&", "é", "tab\t", "\x7f"} {
		for _, sc := range []stateChange{{ID: id, From: StateDoomed, To: StateDestroying}, {ID: id, To: StateDestroyed}, {ID: id}} {
			got, err := encodeRecord(42, sc)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(&wireRecord{Seq: 42, ID: sc.ID, From: sc.From, To: sc.To})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%+v: %s, want %s", sc, got, want)
			}
		}
	}
}
