package diff

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/objgc/objgc/snapshot"
)

func compare(t *testing.T, snapJSON, incomingJSON string) *Result {
	t.Helper()
	snap, err := snapshot.LoadSnapshot(snapshot.NewDocument("snap.json", []byte(snapJSON)))
	if err != nil {
		t.Fatal(err)
	}
	in, err := snapshot.LoadGraph(snapshot.NewDocument("in.json", []byte(incomingJSON)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Compare(snap, in)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ids(t *snapshot.Tree, idx []int32) []string {
	var out []string
	for _, i := range idx {
		out = append(out, t.ID(i))
	}
	return out
}

func TestDoomed(t *testing.T) {
	r := compare(t, `{"?": {"id": "env", "type": "E"},
	    "apps": [{"?": {"id": "a1", "type": "A"}, "vm": {"?": {"id": "vm1", "type": "V"}}},
	             {"?": {"id": "a2", "type": "A"}},
	             {"?": {"id": "gone", "type": "A", "destroyed": true}}]}`,
		`{"?": {"id": "env", "type": "E"}, "apps": [{"?": {"id": "a2", "type": "A"}, "peer": "a1"}]}`)
	if got, want := ids(r.Snapshot, r.Doomed), []string{"a1", "vm1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("doomed = %v, want %v (document order; already destroyed excluded)", got, want)
	}
	if len(r.Dangling) != 1 {
		t.Fatalf("dangling = %+v", r.Dangling)
	}
	d := r.Dangling[0]
	if d.ReferrerID != "a2" || d.DoomedID != "a1" || d.Path != "$.apps[0].peer" {
		t.Errorf("dangling = %+v", d)
	}
}

func TestDanglingInsideArraysAndPlainObjects(t *testing.T) {
	r := compare(t, `{"?": {"id": "env"}, "x": {"?": {"id": "x"}}}`,
		`{"?": {"id": "env"}, "m": {"list": [1, "x", {"deep": ["x"]}]}}`)
	var paths []string
	for _, d := range r.Dangling {
		paths = append(paths, d.Path)
	}
	if want := []string{"$.m.list[1]", "$.m.list[2].deep[0]"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("paths = %v, want %v", paths, want)
	}
}

func TestDropped(t *testing.T) {
	in := `[
	  {"?": {"id": "live", "type": "L"}, "ref": "held", "nested": {"?": {"id": "nested", "type": "D", "destroyed": true}}},
	  {"?": {"id": "held", "type": "D", "destroyed": true}, "inner": {"?": {"id": "chain", "type": "D", "destroyed": true}}},
	  {"?": {"id": "orphan", "type": "D", "destroyed": true}, "child": {"?": {"id": "orphanchild", "type": "D", "destroyed": true}}},
	  {"?": {"id": "hasLive", "type": "D", "destroyed": true}, "child": {"?": {"id": "alive", "type": "L"}}},
	  {"?": {"id": "refByDropped", "type": "D", "destroyed": true}}
	]`
	in = in[:len(in)-1] + `, {"?": {"id": "x", "type": "D", "destroyed": true}, "r": "refByDropped"}]`
	r := compare(t, `null`, in)
	want := []string{"orphan", "orphanchild", "refByDropped", "x"}
	if got := ids(r.Incoming, r.Dropped); !reflect.DeepEqual(got, want) {
		t.Errorf("dropped = %v, want %v", got, want)
	}
}

func TestTypeChanges(t *testing.T) {
	r := compare(t, `[{"?": {"id": "a", "type": "io.murano.Environment"}}, {"?": {"id": "b", "type": "X/1@p"}}, {"?": {"id": "c", "type": "Old"}}]`,
		`[{"?": {"id": "a", "type": "io.murano.Environment/0.0.0@io.murano"}}, {"?": {"id": "b", "type": "X/2@p"}}, {"?": {"id": "c", "type": "New"}}]`)
	var got []string
	for _, tc := range r.TypeChanges {
		got = append(got, tc.ID+":"+tc.OldString+"->"+tc.NewString)
	}
	if want := []string{"b:X/1@p->X/2@p", "c:Old->New"}; !reflect.DeepEqual(got, want) {
		t.Errorf("type changes = %v, want %v", got, want)
	}
	if len(r.Doomed) != 0 {
		t.Errorf("a type change destroyed %v", ids(r.Snapshot, r.Doomed))
	}
}

// TestCompareTruncatedMappedModel: a model file truncated under its
// mapping after it was read makes the comparison's goroutines fault
// reading its string values; Compare returns the *snapshot.ChangedError
// naming the file, and does not crash.
func TestCompareTruncatedMappedModel(t *testing.T) {
	model := `{"ObjectsCopy": {"?": {"id": "env", "type": "E"}, "apps": [{"?": {"id": "app", "type": "A"}}], "ref": "app"},` +
		` "Objects": {"?": {"id": "env", "type": "E"}, "apps": [], "ref": "app"}}`
	// Padded to the size from which ReadDocument maps a file.
	body := model + strings.Repeat(" ", 1<<20)
	name := filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := snapshot.ReadDocument(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer doc.Close()
	if !doc.Mapped() {
		t.Skip("files are not mapped here")
	}
	snap, in, err := snapshot.LoadModel(doc)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := Compare(snap, in); err != nil || len(r.Dangling) != 1 {
		t.Fatalf("before the truncation: %v, %+v", err, r)
	}
	if err := os.Truncate(name, 0); err != nil {
		t.Fatal(err)
	}
	r, err := Compare(snap, in)
	var ce *snapshot.ChangedError
	if !errors.As(err, &ce) || ce.File != name || r != nil {
		t.Fatalf("Compare of a truncated mapped model: %v, %v; want no result and a *snapshot.ChangedError naming %s", r, err, name)
	}
	if want := name + ": the file was truncated or rewritten while objgc read it; run again once it is written whole"; err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}
