package snapshot

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/objgc/objgc/internal/jsonedit"
)

// objSummary is what the tests compare of one object: its id, owner id,
// path and type.
type objSummary struct {
	ID, Owner, Path, Type string
}

// summarize lists t's first copies in document order.
func summarize(t *Tree) []objSummary {
	var out []objSummary
	for _, i := range docOrder(t) {
		o := &t.Objects[i]
		if t.First(i) != i {
			continue
		}
		s := objSummary{ID: t.ID(i), Path: t.ObjectPath(i), Type: t.Type(i).String()}
		if !o.HasID() {
			s.ID = "<none>"
		}
		if owner := t.Owner(i); owner >= 0 {
			s.Owner = t.ID(owner)
		}
		out = append(out, s)
	}
	return out
}

// docOrder returns the indexes of t.Objects sorted by Start.
func docOrder(t *Tree) []int32 {
	idx := make([]int32, len(t.Objects))
	for i := range idx {
		idx[i] = int32(i)
	}
	sortByStart(t.Objects, idx)
	return idx
}

func ids(t *Tree) []string {
	var out []string
	for _, s := range summarize(t) {
		out = append(out, s.ID)
	}
	return out
}

func doc(s string) *Document { return NewDocument("m.json", []byte(s)) }

func readModel(t *testing.T, name string) *Document {
	t.Helper()
	d, err := ReadDocument(filepath.Join("..", "testdata", "models", name), nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestLoadModelForms(t *testing.T) {
	const a = `{"?": {"id": "a", "type": "A"}, "b": {"?": {"id": "b", "type": "B"}}}`
	const c = `{"?": {"id": "c", "type": "C"}}`
	tests := []struct {
		name               string
		in                 string
		snap, inc          []string
		snapNull, incNull  bool
		snapPath, incPath  string
		snapFirstPath      string
		incFirstPath       string
		snapStart, snapEnd string // the snapshot tree's bytes
	}{
		{
			name: "envelope", in: `{"Objects": ` + c + `, "ObjectsCopy": ` + a + `, "Attributes": []}`,
			snap: []string{"a", "b"}, inc: []string{"c"},
			snapPath: "$.ObjectsCopy", incPath: "$.Objects",
			snapFirstPath: "$.ObjectsCopy", incFirstPath: "$.Objects",
		},
		{
			name: "envelope ObjectsCopy first", in: `{"ObjectsCopy": [` + a + `], "Objects": [` + c + `]}`,
			snap: []string{"a", "b"}, inc: []string{"c"},
			snapPath: "$.ObjectsCopy", incPath: "$.Objects",
			snapFirstPath: "$.ObjectsCopy[0]", incFirstPath: "$.Objects[0]",
		},
		{
			name: "Objects null: the environment is deleted", in: `{"Objects": null, "ObjectsCopy": ` + a + `}`,
			snap: []string{"a", "b"}, incNull: true,
			snapPath: "$.ObjectsCopy", incPath: "$.Objects",
			snapFirstPath: "$.ObjectsCopy",
		},
		{
			name: "missing ObjectsCopy: a first deployment", in: `{"Objects": ` + a + `, "Attributes": [["a", "x", 1]]}`,
			snapNull: true, inc: []string{"a", "b"},
			snapPath: "$.ObjectsCopy", incPath: "$.Objects",
			incFirstPath: "$.Objects",
		},
		{
			name: "ObjectsCopy null", in: `{"Objects": ` + a + `, "ObjectsCopy": null}`,
			snapNull: true, inc: []string{"a", "b"},
			snapPath: "$.ObjectsCopy", incPath: "$.Objects",
			incFirstPath: "$.Objects",
		},
		{
			name: "missing Objects", in: `{"ObjectsCopy": ` + a + `}`,
			snap: []string{"a", "b"}, incNull: true,
			snapPath: "$.ObjectsCopy", incPath: "$.Objects",
			snapFirstPath: "$.ObjectsCopy",
		},
		{
			name: "engine task", in: `{"action": {"method": "deploy"}, "model": {"Objects": ` + c + `, "ObjectsCopy": ` + a + `}, "token": "t"}`,
			snap: []string{"a", "b"}, inc: []string{"c"},
			snapPath: "$.model.ObjectsCopy", incPath: "$.model.Objects",
			snapFirstPath: "$.model.ObjectsCopy", incFirstPath: "$.model.Objects",
		},
		{
			name: "escaped envelope keys", in: `{"Obj\u0065cts": ` + c + `, "ObjectsCop\u0079": ` + a + `}`,
			snap: []string{"a", "b"}, inc: []string{"c"},
			snapPath: "$.ObjectsCopy", incPath: "$.Objects",
			snapFirstPath: "$.ObjectsCopy", incFirstPath: "$.Objects",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, inc, err := LoadModel(doc(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(snap); !reflect.DeepEqual(got, tt.snap) {
				t.Errorf("snapshot ids = %v, want %v", got, tt.snap)
			}
			if got := ids(inc); !reflect.DeepEqual(got, tt.inc) {
				t.Errorf("incoming ids = %v, want %v", got, tt.inc)
			}
			if snap.Null != tt.snapNull || inc.Null != tt.incNull {
				t.Errorf("Null = %v, %v; want %v, %v", snap.Null, inc.Null, tt.snapNull, tt.incNull)
			}
			if snap.Path != tt.snapPath || inc.Path != tt.incPath {
				t.Errorf("Path = %q, %q; want %q, %q", snap.Path, inc.Path, tt.snapPath, tt.incPath)
			}
			if len(tt.snap) > 0 {
				if got := summarize(snap)[0].Path; got != tt.snapFirstPath {
					t.Errorf("first snapshot object at %s, want %s", got, tt.snapFirstPath)
				}
			}
			if len(tt.inc) > 0 {
				if got := summarize(inc)[0].Path; got != tt.incFirstPath {
					t.Errorf("first incoming object at %s, want %s", got, tt.incFirstPath)
				}
			}
			for _, tr := range []*Tree{snap, inc} {
				if !tr.Null && string(tr.Doc.Data[tr.Start]) != "{" && string(tr.Doc.Data[tr.Start]) != "[" {
					t.Errorf("tree %s starts with %q", tr.Path, tr.Doc.Data[tr.Start])
				}
			}
		})
	}
}

func TestLoadSnapshotAndGraphForms(t *testing.T) {
	const a = `{"?": {"id": "a"}, "x": [{"?": {"id": "b"}}]}`
	const c = `{"?": {"id": "c"}}`
	tests := []struct {
		name                string
		in                  string
		snap, graph         []string
		snapPath            string
		graphPath           string
		snapNull, graphNull bool
	}{
		{name: "bare object root", in: a, snap: []string{"a", "b"}, graph: []string{"a", "b"}, snapPath: "$", graphPath: "$"},
		{name: "plain object root", in: `{"env": ` + a + `, "other": [` + c + `]}`,
			snap: []string{"a", "b", "c"}, graph: []string{"a", "b", "c"}, snapPath: "$", graphPath: "$"},
		{name: "array root", in: ` [` + a + `, ` + c + `]`,
			snap: []string{"a", "b", "c"}, graph: []string{"a", "b", "c"}, snapPath: "$", graphPath: "$"},
		{name: "envelope with both", in: `{"Objects": ` + c + `, "ObjectsCopy": ` + a + `}`,
			snap: []string{"a", "b"}, graph: []string{"c"}, snapPath: "$.ObjectsCopy", graphPath: "$.Objects"},
		{name: "envelope without ObjectsCopy", in: `{"Objects": ` + c + `}`,
			snap: []string{"c"}, graph: []string{"c"}, snapPath: "$.Objects", graphPath: "$.Objects"},
		{name: "envelope without Objects", in: `{"ObjectsCopy": ` + a + `}`,
			snap: []string{"a", "b"}, snapPath: "$.ObjectsCopy", graphPath: "$.Objects", graphNull: true},
		{name: "envelope with null ObjectsCopy", in: `{"Objects": ` + c + `, "ObjectsCopy": null}`,
			graph: []string{"c"}, snapPath: "$.ObjectsCopy", graphPath: "$.Objects", snapNull: true},
		{name: "task", in: `{"model": {"Objects": ` + c + `, "ObjectsCopy": ` + a + `}}`,
			snap: []string{"a", "b"}, graph: []string{"c"}, snapPath: "$.model.ObjectsCopy", graphPath: "$.model.Objects"},
		{name: "a model key that is not an object is a bare tree", in: `{"model": "x", "o": ` + c + `}`,
			snap: []string{"c"}, graph: []string{"c"}, snapPath: "$", graphPath: "$"},
		{name: "bare null", in: `null`, snapPath: "$", graphPath: "$", snapNull: true, graphNull: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadSnapshot(doc(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			g, err := LoadGraph(doc(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(s); !reflect.DeepEqual(got, tt.snap) {
				t.Errorf("LoadSnapshot ids = %v, want %v", got, tt.snap)
			}
			if got := ids(g); !reflect.DeepEqual(got, tt.graph) {
				t.Errorf("LoadGraph ids = %v, want %v", got, tt.graph)
			}
			if s.Path != tt.snapPath || g.Path != tt.graphPath {
				t.Errorf("paths = %q, %q; want %q, %q", s.Path, g.Path, tt.snapPath, tt.graphPath)
			}
			if s.Null != tt.snapNull || g.Null != tt.graphNull {
				t.Errorf("Null = %v, %v; want %v, %v", s.Null, g.Null, tt.snapNull, tt.graphNull)
			}
		})
	}
}

func TestLoadModelRejectsBareTrees(t *testing.T) {
	const want = `m.json: $: expected a Murano envelope {"Objects": ..., "ObjectsCopy": ...} or an engine task {"model": ...}; for two bare object trees use --snapshot and --graph`
	for _, in := range []string{`{"?": {"id": "a"}}`, `[{"?": {"id": "a"}}]`, `{"a": 1}`, `null`, `"s"`, `5`, `{"model": null}`} {
		_, _, err := LoadModel(doc(in))
		if err == nil || err.Error() != want {
			t.Errorf("LoadModel(%s) = %v, want %s", in, err, want)
		}
	}
}

func TestReadDocument(t *testing.T) {
	d, err := ReadDocument("-", strings.NewReader(`{"Objects": {"?": {"id": "x"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "<stdin>" {
		t.Errorf("Name = %q, want <stdin>", d.Name)
	}
	_, inc, err := LoadModel(d)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(inc); !reflect.DeepEqual(got, []string{"x"}) {
		t.Errorf("ids = %v", got)
	}
	// sha256 of the input bytes, as `sha256sum` prints it.
	if got, want := NewDocument("x", []byte("abc")).SHA256(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Errorf("SHA256 = %q, want %q", got, want)
	}

	// Errors from reading name the file and what was expected.
	dir := t.TempDir()
	if _, err := ReadDocument("-", nil); err == nil || err.Error() != "<stdin>: no standard input" {
		t.Errorf("no stdin: %v", err)
	}
	missing := filepath.Join(dir, "nope.json")
	if _, err := ReadDocument(missing, nil); err == nil || err.Error() != missing+": no such file; expected a Murano model (JSON)" {
		t.Errorf("missing file: %v", err)
	}
	if _, err := ReadDocument(dir, nil); err == nil || err.Error() != dir+": is a directory; expected a Murano model file (JSON)" {
		t.Errorf("directory: %v", err)
	}
	if _, err := ReadDocument("-", errReader{}); err == nil || err.Error() != "<stdin>: reading: broken pipe" {
		t.Errorf("broken stdin: %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestHeaders(t *testing.T) {
	const in = `{"Objects": [
	  {"?": {"id": "a", "type": "io.murano.Environment/1.2.3@io.murano"}},
	  {"?": {"id": "b", "type": "io.murano.Environment", "classVersion": "0.0.0", "package": "io.murano"}},
	  {"?": {"id": "c", "type": "io.murano.X/2.0", "classVersion": "0.0.0", "package": "p.q"}},
	  {"?": {"id": "d", "type": "io.murano.X@pkg", "classVersion": "3.0"}},
	  {"?": {"id": "e", "type": "io.murano.X/1@pkg", "classVersion": "3.0", "package": "other"}},
	  {"?": {"id": "f", "_26411a1861294160833743e45d0eaad9": {"name": "Git", "?": {"id": "not-an-object"}, "id": "x"}, "_actions": {}}},
	  {"?": {"id": null, "type": "T"}},
	  {"?": {"type": "T", "name": "no id"}},
	  {"?": {"id": "g", "destroyed": true}},
	  {"?": {"id": "h", "destroyed": false}},
	  {"?": {"id": "i", "destroyed": null, "type": null, "metadata": {"k": "a"}, "status": "ready"}},
	  {"?": {"id": "j", "dependencies": {"onDestruction": [
	     {"subscriber": "a", "handler": "onA"},
	     {"subscriber": "b", "handler": null},
	     {"subscriber": "c"},
	     {"handler": "onD", "subscriber": "d", "extra": [1]}
	  ], "other": 1}}},
	  {"?": {"id": "k", "dependencies": null}},
	  {"?": {"id": "l", "dependencies": {"onDestruction": null}}},
	  {"?": {"id": "m", "dependencies": {"onDestruction": []}}},
	  {"?": {}}
	]}`
	_, inc, err := LoadModel(doc(in))
	if err != nil {
		t.Fatal(err)
	}
	type hdr struct {
		id         string
		hasID      bool
		typ        Type
		typeString string
		destroyed  bool
		deps       []Dependency
	}
	want := []hdr{
		{"a", true, Type{"io.murano.Environment", "1.2.3", "io.murano"}, "io.murano.Environment/1.2.3@io.murano", false, nil},
		{"b", true, Type{"io.murano.Environment", "0.0.0", "io.murano"}, "io.murano.Environment", false, nil},
		{"c", true, Type{"io.murano.X", "2.0", "p.q"}, "io.murano.X/2.0", false, nil},
		{"d", true, Type{"io.murano.X", "3.0", "pkg"}, "io.murano.X@pkg", false, nil},
		{"e", true, Type{"io.murano.X", "1", "pkg"}, "io.murano.X/1@pkg", false, nil},
		{"f", true, Type{}, "", false, nil},
		{"", false, Type{Name: "T"}, "T", false, nil},
		{"", false, Type{Name: "T"}, "T", false, nil},
		{"g", true, Type{}, "", true, nil},
		{"h", true, Type{}, "", false, nil},
		{"i", true, Type{}, "", false, nil},
		{"j", true, Type{}, "", false, []Dependency{
			{Subscriber: "a", Handler: "onA", HasHandler: true},
			{Subscriber: "b"},
			{Subscriber: "c"},
			{Subscriber: "d", Handler: "onD", HasHandler: true},
		}},
		{"k", true, Type{}, "", false, nil},
		{"l", true, Type{}, "", false, nil},
		{"m", true, Type{}, "", false, nil},
		{"", false, Type{}, "", false, nil},
	}
	order := docOrder(inc)
	if len(order) != len(want) {
		t.Fatalf("%d objects, want %d", len(order), len(want))
	}
	for k, i := range order {
		o := &inc.Objects[i]
		got := hdr{inc.ID(i), o.HasID(), inc.Type(i), inc.TypeString(i), o.Destroyed(), nilIfEmpty(inc.Dependencies(i))}
		if !reflect.DeepEqual(got, want[k]) {
			t.Errorf("object %d (%s):\n got %+v\nwant %+v", k, inc.ObjectPath(i), got, want[k])
		}
		if hs := string(inc.Doc.Data[inc.HeaderStart(i):jsonedit.Value(inc.Doc.Data, int(inc.HeaderStart(i)))]); !strings.HasPrefix(hs, "{") || !strings.HasSuffix(hs, "}") {
			t.Errorf("object %d: header span %q", k, hs)
		}
	}
	// Id-less objects are listed once each, in document order.
	var idless []string
	for _, i := range inc.IDless {
		idless = append(idless, inc.ObjectPath(i))
	}
	if want := []string{"$.Objects[6]", "$.Objects[7]", "$.Objects[15]"}; !reflect.DeepEqual(idless, want) {
		t.Errorf("IDless at %v, want %v", idless, want)
	}
	// Nothing inside a header is an object or a reference.
	if _, ok := inc.Lookup("not-an-object"); ok {
		t.Error("an object inside a designer attribute was indexed")
	}
	inc.Strings(func(sv StringValue) bool {
		t.Errorf("string %q at %s: header values are not references", sv.Value, inc.PathAt(sv.Offset))
		return true
	})
	if inc.Len() != 13 {
		t.Errorf("Len = %d, want 13", inc.Len())
	}
}

func TestDuplicates(t *testing.T) {
	// x appears three times: first inside a, then at the top twice. The
	// second copy is the same JSON with other spacing and key order; the
	// third differs. y is owned by x's first copy; its own second copy
	// sits in x's third copy.
	const in = `{"Objects": {"?": {"id": "env"}, "apps": [
	  {"?": {"id": "a"}, "inner": {"?": {"id": "x", "type": "X", "dependencies": {"onDestruction": [{"subscriber": "s1", "handler": "h"}]}}, "p": [1, {"k": "v"}],
	      "y": {"?": {"id": "y"}}}},
	  {"p": [1, {"k": "v"}], "?": {"type": "X", "dependencies": {"onDestruction": [{"subscriber": "s1", "handler": "h"}]}, "id": "x"},
	   "y": {"?": {"id": "y"}}},
	  {"?": {"id": "x", "type": "X", "dependencies": {"onDestruction": [{"subscriber": "s2", "handler": null}, {"subscriber": "s1", "handler": "h"}, {"subscriber": "s1", "handler": "other"}]}}, "p": [2],
	      "y": {"?": {"id": "y"}, "extra": true}}
	]}}`
	_, inc, err := LoadModel(doc(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []objSummary{
		{ID: "env", Path: "$.Objects"},
		{ID: "a", Owner: "env", Path: "$.Objects.apps[0]"},
		{ID: "x", Owner: "a", Path: "$.Objects.apps[0].inner", Type: "X"},
		{ID: "y", Owner: "x", Path: "$.Objects.apps[0].inner.y"},
	}
	if got := summarize(inc); !reflect.DeepEqual(got, want) {
		t.Errorf("objects:\n got %+v\nwant %+v", got, want)
	}
	type dup struct {
		first, copy string
		differs     bool
	}
	var got []dup
	for _, d := range inc.Duplicates {
		got = append(got, dup{inc.ObjectPath(d.First), inc.ObjectPath(d.Copy), d.Differs})
		if f := inc.First(d.Copy); f != d.First {
			t.Errorf("copy %d: First = %d, want %d", d.Copy, f, d.First)
		}
	}
	wantDups := []dup{
		{"$.Objects.apps[0].inner", "$.Objects.apps[1]", false},
		{"$.Objects.apps[0].inner.y", "$.Objects.apps[1].y", false},
		{"$.Objects.apps[0].inner", "$.Objects.apps[2]", true},
		{"$.Objects.apps[0].inner.y", "$.Objects.apps[2].y", true},
	}
	if !reflect.DeepEqual(got, wantDups) {
		t.Errorf("duplicates:\n got %+v\nwant %+v", got, wantDups)
	}
	// The owner comes from the first copy: later copies at the top do not
	// make x top-level, and y's copies inside x's copies resolve to x.
	x, _ := inc.Lookup("x")
	for i := range inc.Objects {
		if inc.ID(int32(i)) == "y" && inc.ID(inc.Owner(int32(i))) != "x" {
			t.Errorf("copy of y at %s: owner %s", inc.ObjectPath(int32(i)), inc.ID(inc.Owner(int32(i))))
		}
		if inc.ID(int32(i)) == "x" && int32(i) != x && inc.ID(inc.Owner(int32(i))) != "env" {
			t.Errorf("later copy of x at %s: enclosing %s", inc.ObjectPath(int32(i)), inc.ID(inc.Owner(int32(i))))
		}
	}
	// Dependencies of all copies, each record once, in document order.
	wantDeps := []Dependency{
		{Subscriber: "s1", Handler: "h", HasHandler: true},
		{Subscriber: "s2"},
		{Subscriber: "s1", Handler: "other", HasHandler: true},
	}
	if got := inc.Dependencies(x); !reflect.DeepEqual(got, wantDeps) {
		t.Errorf("x's dependencies = %+v, want %+v", got, wantDeps)
	}
	if inc.Len() != 4 {
		t.Errorf("Len = %d, want 4", inc.Len())
	}
}

func TestDuplicateEnclosingItself(t *testing.T) {
	// A copy nested inside an earlier copy of the same id: the outer one
	// comes first in document order, so it is the object.
	_, inc, err := LoadModel(doc(`{"Objects": {"?": {"id": "x"}, "self": {"?": {"id": "x"}}, "dup": {"?": {"id": "x"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	i, ok := inc.Lookup("x")
	if !ok || inc.ObjectPath(i) != "$.Objects" || inc.Owner(i) != -1 {
		t.Errorf("x is copy %d at %s, owner %d", i, inc.ObjectPath(i), inc.Owner(i))
	}
	if len(inc.Duplicates) != 2 || inc.Duplicates[0].Differs != true {
		t.Errorf("duplicates = %+v", inc.Duplicates)
	}
	for _, d := range inc.Duplicates {
		if inc.Owner(d.Copy) != i {
			t.Errorf("copy at %s: owner %d, want %d", inc.ObjectPath(d.Copy), inc.Owner(d.Copy), i)
		}
	}
}

func TestOwnershipThroughPlainValues(t *testing.T) {
	const in = `[
	  {"?": {"id": "root"},
	   "plain": {"deeper": [[{"list": [{"?": {"id": "a"}}]}]]},
	   "map": {"k1": {"?": {"id": "b"}, "kids": {"x": [{"?": {"id": "c"}}]}}},
	   "refs": ["a", {"r": "b"}, [["c"]], "not-an-id", 5, null]
	  },
	  {"loose": {"?": {"id": "top"}}},
	  {"?": {}, "kid": {"?": {"id": "owned-by-idless"}}}
	]`
	tr, err := LoadSnapshot(doc(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []objSummary{
		{ID: "root", Path: "$[0]"},
		{ID: "a", Owner: "root", Path: "$[0].plain.deeper[0][0].list[0]"},
		{ID: "b", Owner: "root", Path: "$[0].map.k1"},
		{ID: "c", Owner: "b", Path: "$[0].map.k1.kids.x[0]"},
		{ID: "top", Path: "$[1].loose"},
		{ID: "<none>", Path: "$[2]"},
		{ID: "owned-by-idless", Path: "$[2].kid"},
	}
	got := summarize(tr)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("objects:\n got %+v\nwant %+v", got, want)
	}
	// The owner of an object in an id-less object is that object.
	k, _ := tr.Lookup("owned-by-idless")
	if o := tr.Owner(k); o < 0 || tr.Objects[o].HasID() || tr.ObjectPath(o) != "$[2]" {
		t.Errorf("owner of owned-by-idless = %d", o)
	}
	if e := tr.Enclosing(k); e != tr.Owner(k) {
		t.Errorf("Enclosing = %d, Owner = %d", e, tr.Owner(k))
	}

	var refs []string
	tr.Strings(func(sv StringValue) bool {
		if _, ok := tr.Lookup(sv.Value); ok {
			refs = append(refs, sv.Value+" at "+tr.PathAt(sv.Offset))
		}
		return true
	})
	wantRefs := []string{"a at $[0].refs[0]", "b at $[0].refs[1].r", "c at $[0].refs[2][0][0]"}
	if !reflect.DeepEqual(refs, wantRefs) {
		t.Errorf("references:\n got %q\nwant %q", refs, wantRefs)
	}
}

func TestStrings(t *testing.T) {
	const in = `{"Objects": {"?": {"id": "x\"y", "type": "T"}, "a": "x\"y", "b": ["plain", "\u0041\n"], "c\"": "long-string-value", "d": {"e": ""}}}`
	_, inc, err := LoadModel(doc(in))
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	inc.Strings(func(sv StringValue) bool {
		all = append(all, sv.Value+"@"+inc.PathAt(sv.Offset))
		if inc.Doc.Data[sv.Offset] != '"' {
			t.Errorf("offset %d of %q is not on a quote", sv.Offset, sv.Value)
		}
		return true
	})
	want := []string{`x"y@$.Objects.a`, "plain@$.Objects.b[0]", "A\n@$.Objects.b[1]", `long-string-value@$.Objects["c\""]`, "@$.Objects.d.e"}
	if !reflect.DeepEqual(all, want) {
		t.Errorf("Strings:\n got %q\nwant %q", all, want)
	}
	if _, ok := inc.Lookup(`x"y`); !ok {
		t.Error(`Lookup("x\"y") failed: escaped ids are decoded`)
	}
	// StringsOfLength keeps lengths the filter accepts, and stops early.
	var short []string
	inc.StringsOfLength(inc.MightBeID, func(sv StringValue) bool {
		short = append(short, sv.Value)
		return true
	})
	if want := []string{`x"y`}; !reflect.DeepEqual(short, want) {
		t.Errorf("StringsOfLength(MightBeID) = %q, want %q", short, want)
	}
	n := 0
	inc.Strings(func(StringValue) bool { n++; return false })
	if n != 1 {
		t.Errorf("Strings went on after yield returned false: %d calls", n)
	}
	if !inc.MightBeID(3) || inc.MightBeID(4) || inc.MightBeID(300) {
		t.Error("MightBeID is wrong")
	}
}

// TestRealModels checks the index of the real models in testdata/models
// (copies of models published by OpenStack Murano,
// murano-apps, python-muranoclient and congress; testdata/models/README.md
// gives each file's origin).
func TestRealModels(t *testing.T) {
	t.Run("environments-model-response", func(t *testing.T) {
		tr, err := LoadSnapshot(readModel(t, "environments-model-response.json"))
		if err != nil {
			t.Fatal(err)
		}
		want := []objSummary{
			{"f7f22c174070455c9cafc59391402bdc", "", "$", "io.murano.Environment/0.0.0@io.murano"},
			{"594e94fcfe4c48ef8f9b55edb3b9f177", "f7f22c174070455c9cafc59391402bdc", "$.defaultNetworks.environment", "io.murano.resources.ExistingNeutronNetwork"},
			{"c80e33dd67a44f489b2f04818b72f404", "f7f22c174070455c9cafc59391402bdc", `$.regions[""]`, "io.murano.CloudRegion/0.0.0@io.murano"},
			{"e145b50623c04a68956e3e656a0568d3", "c80e33dd67a44f489b2f04818b72f404", `$.regions[""].defaultNetworks.environment`, "io.murano.resources.NeutronNetwork/0.0.0@io.murano"},
			{"f8cb28d147914850978edb35eca156e1", "f7f22c174070455c9cafc59391402bdc", "$.regions.RegionTwo", "io.murano.CloudRegion/0.0.0@io.murano"},
			{"72d2c13c600247c98e09e2e3c1cd9d70", "f8cb28d147914850978edb35eca156e1", "$.regions.RegionTwo.defaultNetworks.environment", "io.murano.resources.NeutronNetwork/0.0.0@io.murano"},
		}
		if got := summarize(tr); !reflect.DeepEqual(got, want) {
			t.Errorf("objects:\n got %+v\nwant %+v", got, want)
		}
		i, _ := tr.Lookup("e145b50623c04a68956e3e656a0568d3")
		if got, want := tr.Dependencies(int32(i)), []Dependency{{Subscriber: "c80e33dd67a44f489b2f04818b72f404"}}; !reflect.DeepEqual(got, want) {
			t.Errorf("dependencies = %+v, want %+v", got, want)
		}
		var refs []string
		tr.Strings(func(sv StringValue) bool {
			if _, ok := tr.Lookup(sv.Value); ok {
				refs = append(refs, tr.PathAt(sv.Offset)+" -> "+sv.Value)
			}
			return true
		})
		if want := []string{"$.regions.RegionOne -> c80e33dd67a44f489b2f04818b72f404"}; !reflect.DeepEqual(refs, want) {
			t.Errorf("references = %q, want %q", refs, want)
		}
		if got := tr.PathAt(int(tr.HeaderStart(i))); got != `$.regions[""].defaultNetworks.environment["?"]` {
			t.Errorf("PathAt(header) = %s", got)
		}
	})
	t.Run("wordpress duplicates", func(t *testing.T) {
		tr, err := LoadSnapshot(readModel(t, "wordpress.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Objects) != 19 || tr.Len() != 10 || len(tr.Duplicates) != 9 {
			t.Fatalf("%d copies, %d ids, %d duplicates; want 19, 10, 9", len(tr.Objects), tr.Len(), len(tr.Duplicates))
		}
		for _, d := range tr.Duplicates {
			if d.Differs {
				t.Errorf("copy at %s differs from %s", tr.ObjectPath(d.Copy), tr.ObjectPath(d.First))
			}
		}
		i, _ := tr.Lookup("0b568a74-66c9-4e73-84d8-7dd1b96066ec")
		if got := tr.ObjectPath(i); got != "$.applications[2].instance" {
			t.Errorf("first copy at %s", got)
		}
		if o := tr.Owner(i); tr.ID(o) != "33e91790-5c44-40ce-9292-9dd4856325a0" {
			t.Errorf("owner %s", tr.ID(o))
		}
	})
	t.Run("template-list-apps-response: two apps, one id", func(t *testing.T) {
		tr, err := LoadSnapshot(readModel(t, "template-list-apps-response.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Duplicates) != 1 || !tr.Duplicates[0].Differs {
			t.Fatalf("duplicates = %+v, want one that differs", tr.Duplicates)
		}
		d := tr.Duplicates[0]
		if tr.ObjectPath(d.First) != "$[0]" || tr.ObjectPath(d.Copy) != "$[1]" {
			t.Errorf("first %s, copy %s", tr.ObjectPath(d.First), tr.ObjectPath(d.Copy))
		}
		if got := tr.Type(d.First).Name; got != "io.murano.apps.apache.Tomcat" {
			t.Errorf("the first copy's type wins: %s", got)
		}
	})
	t.Run("envelopes", func(t *testing.T) {
		for _, name := range []string{"RefStackClient_env-fixture.json", "Tomcat_tomcat-for-mock.json"} {
			snap, inc, err := LoadModel(readModel(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if !snap.Null || snap.Len() != 0 || inc.Len() != 4 || summarize(inc)[0].Path != "$.Objects" {
				t.Errorf("%s: snapshot %d objects (null %v), incoming %d", name, snap.Len(), snap.Null, inc.Len())
			}
		}
	})
	t.Run("congress references", func(t *testing.T) {
		tr, err := LoadGraph(readModel(t, "congress_quick-env-2_deployment-description_Objects.json"))
		if err != nil {
			t.Fatal(err)
		}
		var refs []string
		tr.Strings(func(sv StringValue) bool {
			if j, ok := tr.Lookup(sv.Value); ok {
				refs = append(refs, tr.PathAt(sv.Offset)+" -> "+tr.ObjectPath(j))
				if r := tr.ObjectAt(sv.Offset); tr.ID(r) != "fda74653-8b66-42e2-be16-12ebc87d7570" {
					t.Errorf("reference held by %s", tr.ID(r))
				}
			}
			return true
		})
		want := []string{"$.services[2].database -> $.services[0]", "$.services[2].tomcat -> $.services[1]"}
		if !reflect.DeepEqual(refs, want) {
			t.Errorf("references = %q, want %q", refs, want)
		}
	})
	t.Run("every model loads", func(t *testing.T) {
		files, _ := filepath.Glob("../testdata/models/*.json")
		pairs, _ := filepath.Glob("../testdata/pairs/*.json")
		if len(files) < 10 || len(pairs) < 5 {
			t.Fatalf("%d models, %d pairs", len(files), len(pairs))
		}
		for _, f := range append(files, pairs...) {
			d, err := ReadDocument(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			s, err := LoadSnapshot(d)
			if err != nil {
				t.Errorf("LoadSnapshot: %v", err)
				continue
			}
			g, err := LoadGraph(d)
			if err != nil {
				t.Errorf("LoadGraph: %v", err)
				continue
			}
			checkInvariants(t, s)
			checkInvariants(t, g)
		}
		for _, f := range pairs {
			d, _ := ReadDocument(f, nil)
			s, g, err := LoadModel(d)
			if err != nil {
				t.Errorf("LoadModel: %v", err)
				continue
			}
			checkInvariants(t, s)
			checkInvariants(t, g)
		}
	})
}

func TestPairPaths(t *testing.T) {
	d, err := ReadDocument("../testdata/pairs/app-removed.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, _, err := LoadModel(d)
	if err != nil {
		t.Fatal(err)
	}
	i, ok := snap.Lookup("76b9ca88-c668-4e37-a830-5845adc10b0e")
	if !ok {
		t.Fatal("instance missing")
	}
	if got := snap.ObjectPath(i); got != "$.ObjectsCopy.services[0].instance" {
		t.Errorf("ObjectPath = %s", got)
	}
	if got := snap.PathAt(int(snap.Objects[i].Start)); got != "$.ObjectsCopy.services[0].instance" {
		t.Errorf("PathAt(Start) = %s", got)
	}
	if got := snap.PathAt(snap.Start); got != "$.ObjectsCopy" {
		t.Errorf("PathAt(tree start) = %s", got)
	}
}

// checkInvariants checks what every loaded tree must satisfy: spans inside
// the data, valid indexes, owners before their objects, Lookup returning
// first copies.
func checkInvariants(t *testing.T, tr *Tree) {
	t.Helper()
	data := tr.Doc.Data
	n := int32(len(tr.Objects))
	if tr.Start < 0 || tr.End > len(data) || (!tr.Null && tr.Start >= tr.End) {
		t.Fatalf("%s: tree span [%d,%d) in %d bytes", tr.Path, tr.Start, tr.End, len(data))
	}
	seen := map[string]int32{}
	for i := range tr.Objects {
		o := &tr.Objects[i]
		// Types of the table are parsed once; the same as parsing the
		// string (legacy keys aside).
		if ty, _ := ParseType(tr.TypeString(int32(i))); !tr.HasLegacyType(int32(i)) && tr.Type(int32(i)) != ty {
			t.Fatalf("object %d: type %+v, its string parses as %+v", i, tr.Type(int32(i)), ty)
		}
		if int(o.Start) < tr.Start || int(o.End) > tr.End || int(o.Start) >= int(o.End) || data[int(o.Start)] != '{' || data[int(o.End)-1] != '}' {
			t.Fatalf("object %d: span [%d,%d) outside the tree [%d,%d)", i, o.Start, o.End, tr.Start, tr.End)
		}
		hs, first, owner := tr.HeaderStart(int32(i)), tr.First(int32(i)), tr.Owner(int32(i))
		if he := jsonedit.Value(data, int(hs)); hs <= o.Start || he >= int(o.End) || data[hs] != '{' || data[he-1] != '}' {
			t.Fatalf("object %d: header [%d,%d) in [%d,%d)", i, hs, he, o.Start, o.End)
		}
		if first < 0 || first >= n || owner < -1 || owner >= n {
			t.Fatalf("object %d: First %d, Owner %d of %d", i, first, owner, n)
		}
		if owner >= 0 && tr.Objects[owner].Start >= o.Start {
			t.Fatalf("object %d at %d: owner %d starts at %d", i, o.Start, owner, tr.Objects[owner].Start)
		}
		id := tr.ID(int32(i))
		if o.HasID() {
			if f := &tr.Objects[first]; tr.ID(first) != id || f.Start > o.Start {
				t.Fatalf("object %d: first copy %d has id %q at %d", i, first, tr.ID(first), f.Start)
			}
			if j, ok := seen[id]; !ok || tr.Objects[i].Start < tr.Objects[j].Start {
				seen[id] = int32(i)
			}
		} else if first != int32(i) || id != "" {
			t.Fatalf("id-less object %d: First %d, ID %q", i, first, id)
		}
		if p := tr.ObjectPath(int32(i)); !strings.HasPrefix(p, "$") {
			t.Fatalf("object %d: path %q", i, p)
		}
		if got := tr.ObjectAt(int(o.Start)); got != int32(i) {
			t.Fatalf("ObjectAt(%d) = %d, want %d", o.Start, got, i)
		}
		_ = tr.PathAt(int(hs))
	}
	if tr.Len() != len(seen) {
		t.Fatalf("Len = %d, want %d", tr.Len(), len(seen))
	}
	for id, i := range seen {
		if j, ok := tr.Lookup(id); !ok || j != i {
			t.Fatalf("Lookup(%q) = %d, %v; want %d", id, j, ok, i)
		}
	}
	tr.Strings(func(sv StringValue) bool {
		if sv.Offset < tr.Start || sv.Offset >= tr.End || data[sv.Offset] != '"' {
			t.Fatalf("string at %d outside [%d,%d)", sv.Offset, tr.Start, tr.End)
		}
		_ = tr.PathAt(sv.Offset)
		return true
	})
}

// TestBadInput checks that every kind of bad input gives an error naming
// the file, the JSON path and what was expected; none panics.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name, in, want string
		syntax         bool // a *SyntaxError, else a *ModelError
		line, col      int
	}{
		{"invalid JSON", "{\n  \"Objects\": [1,\n   2 x]}",
			`m.json:3:6: invalid JSON at $.Objects[1]: unexpected 'x' in an array; expected ',' or ']'`, true, 3, 6},
		{"invalid JSON after CRLF and tabs", "{\r\n\t\"Objects\": {\r\n\t\t\"a\": tru}}",
			`m.json:3:8: invalid JSON at $.Objects.a: unexpected 't'; expected true`, true, 3, 8},
		{"missing colon", `{"Objects" null}`, `m.json:1:12: invalid JSON at $: unexpected 'n' after a key; expected ':'`, true, 1, 12},
		{"unquoted key", `{"Objects": {a: 1}}`, `m.json:1:14: invalid JSON at $.Objects: unexpected 'a'; expected a string key`, true, 1, 14},
		{"missing colon after a leading space", `  {"Objects" null}`, `m.json:1:14: invalid JSON at $: unexpected 'n' after a key; expected ':'`, true, 1, 14},
		{"second key without colon", `{"Objects": {"x": {"a": 1, "b" 2}}}`, `m.json:1:32: invalid JSON at $.Objects.x: unexpected '2' after a key; expected ':'`, true, 1, 32},
		{"header key without colon", `{"Objects": {"?": {"id": "a", "type" 1}}}`, `m.json:1:38: invalid JSON at $.Objects["?"]: unexpected '1' after a key; expected ':'`, true, 1, 38},
		{"record key without colon", `{"Objects": {"?": {"dependencies": {"onDestruction": [{"subscriber" 1}]}}}}`, `m.json:1:69: invalid JSON at $.Objects["?"].dependencies.onDestruction[0]: unexpected '1' after a key; expected ':'`, true, 1, 69},
		{"trailing comma", `{"Objects": [1,]}`, `m.json:1:16: invalid JSON at $.Objects[1]: unexpected ']'; expected a value`, true, 1, 16},
		{"bad number", `{"Objects": [-]}`, `m.json:1:15: invalid JSON at $.Objects[0]: unexpected ']' in a number; expected a digit`, true, 1, 15},
		{"bad fraction", `{"Objects": [1.]}`, `m.json:1:16: invalid JSON at $.Objects[0]: unexpected ']' after a decimal point; expected a digit`, true, 1, 16},
		{"bad exponent", `{"Objects": [1e+]}`, `m.json:1:17: invalid JSON at $.Objects[0]: unexpected ']' in an exponent; expected a digit`, true, 1, 17},
		{"leading zero", `{"Objects": [01]}`, `m.json:1:15: invalid JSON at $.Objects[0]: unexpected '1' in an array; expected ',' or ']'`, true, 1, 15},
		{"header not an object", `{"Objects": {"?": 5}}`, `m.json: $.Objects["?"]: the header must be a JSON object`, false, 0, 0},
		{"header an array", `{"Objects": [{"a": 1}, {"?": ["id"]}]}`, `m.json: $.Objects[1]["?"]: the header must be a JSON object`, false, 0, 0},
		{"header a string", `{"Objects": {"?": "x"}}`, `m.json: $.Objects["?"]: the header must be a JSON object`, false, 0, 0},
		{"header null", `{"Objects": {"?": null}}`, `m.json: $.Objects["?"]: the header must be a JSON object`, false, 0, 0},
		{"two headers", `{"Objects": {"?": {"id": "a"}, "?": {"id": "b"}}}`, `m.json: $.Objects["?"]: duplicate "?" key: an object has one header`, false, 0, 0},
		{"id a number", `{"Objects": {"?": {"id": 5}}}`, `m.json: $.Objects["?"].id: the id must be a string`, false, 0, 0},
		{"id an object", `{"Objects": {"?": {"id": {"a": 1}}}}`, `m.json: $.Objects["?"].id: the id must be a string`, false, 0, 0},
		{"id true", `{"ObjectsCopy": {"k": [{"?": {"id": true}}]}}`, `m.json: $.ObjectsCopy.k[0]["?"].id: the id must be a string`, false, 0, 0},
		{"empty id", `{"Objects": {"?": {"id": ""}}}`, `m.json: $.Objects["?"].id: the id must be a non-empty string`, false, 0, 0},
		{"type with a space", `{"Objects": {"a": [{"?": {"id": "x", "type": "a b"}}]}}`,
			`m.json: $.Objects.a[0]["?"].type: type "a b" does not parse; expected name[/version][@package]`, false, 0, 0},
		{"type with an empty version", `{"Objects": {"?": {"id": "x", "type": "x/@p"}}}`,
			`m.json: $.Objects["?"].type: type "x/@p" does not parse; expected name[/version][@package]`, false, 0, 0},
		{"type with an empty package", `{"Objects": {"?": {"type": "x@", "id": "x"}}}`,
			`m.json: $.Objects["?"].type: type "x@" does not parse; expected name[/version][@package]`, false, 0, 0},
		{"type without a name", `{"Objects": {"?": {"id": "x", "type": "@p"}}}`,
			`m.json: $.Objects["?"].type: type "@p" does not parse; expected name[/version][@package]`, false, 0, 0},
		{"type with two packages", `{"Objects": {"?": {"id": "x", "type": "a/1@b@c"}}}`,
			`m.json: $.Objects["?"].type: type "a/1@b@c" does not parse; expected name[/version][@package]`, false, 0, 0},
		{"type a number", `{"Objects": {"?": {"id": "x", "type": 7}}}`, `m.json: $.Objects["?"].type: the type must be a string`, false, 0, 0},
		{"type an array", `{"Objects": {"?": {"id": "x", "type": ["T"]}}}`, `m.json: $.Objects["?"].type: the type must be a string`, false, 0, 0},
		{"classVersion a number", `{"Objects": {"?": {"id": "x", "type": "T", "classVersion": 1}}}`, `m.json: $.Objects["?"].classVersion: classVersion must be a string`, false, 0, 0},
		{"package an object", `{"Objects": {"?": {"id": "x", "type": "T", "package": {}}}}`, `m.json: $.Objects["?"].package: package must be a string`, false, 0, 0},
		{"destroyed a string", `{"Objects": {"?": {"id": "x", "destroyed": "yes"}}}`, `m.json: $.Objects["?"].destroyed: destroyed must be true or false`, false, 0, 0},
		{"destroyed a number", `{"Objects": {"?": {"id": "x", "destroyed": 1}}}`, `m.json: $.Objects["?"].destroyed: destroyed must be true or false`, false, 0, 0},
		{"dependencies an array", `{"Objects": {"?": {"id": "x", "dependencies": []}}}`,
			`m.json: $.Objects["?"].dependencies: dependencies must be a JSON object like {"onDestruction": [...]}`, false, 0, 0},
		{"onDestruction an object", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": {}}}}}`,
			`m.json: $.Objects["?"].dependencies.onDestruction: onDestruction must be an array of {"subscriber": ID, "handler": NAME or null}`, false, 0, 0},
		{"record a number", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [5]}}}}`,
			`m.json: $.Objects["?"].dependencies.onDestruction[0]: an onDestruction record must be a JSON object {"subscriber": ID, "handler": NAME or null}`, false, 0, 0},
		{"record without subscriber", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [{"subscriber": "y"}, {"handler": "h"}]}}}}`,
			`m.json: $.Objects["?"].dependencies.onDestruction[1]: an onDestruction record needs a "subscriber" id`, false, 0, 0},
		{"empty subscriber", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [{"subscriber": ""}]}}}}`,
			`m.json: $.Objects["?"].dependencies.onDestruction[0].subscriber: the subscriber must be an object id (a non-empty string)`, false, 0, 0},
		{"empty type", `{"Objects": {"?": {"id": "x", "type": ""}}}`,
			`m.json: $.Objects["?"].type: type "" does not parse; expected name[/version][@package]`, false, 0, 0},
		{"null subscriber", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [{"subscriber": null}]}}}}`,
			`m.json: $.Objects["?"].dependencies.onDestruction[0].subscriber: the subscriber must be an object id (a non-empty string)`, false, 0, 0},
		{"subscriber a number", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [{"subscriber": 1}]}}}}`,
			`m.json: $.Objects["?"].dependencies.onDestruction[0].subscriber: the subscriber must be a string`, false, 0, 0},
		{"handler a number", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [{"subscriber": "y", "handler": 3}]}}}}`,
			`m.json: $.Objects["?"].dependencies.onDestruction[0].handler: the handler must be a string`, false, 0, 0},
		{"envelope with only Attributes", `{"Attributes": []}`,
			`m.json: $: an envelope needs "Objects" or "ObjectsCopy" (either may be null); found only "Attributes"`, false, 0, 0},
		{"task without Objects and ObjectsCopy", `{"model": {"Attributes": []}, "action": {}}`,
			`m.json: $.model: an engine task's model must be an envelope with "Objects" or "ObjectsCopy"`, false, 0, 0},
		{"Objects a string", `{"Objects": "x"}`, `m.json: $.Objects: expected an object tree (a JSON object or array) or null`, false, 0, 0},
		{"ObjectsCopy a number", `{"Objects": null, "ObjectsCopy": 1}`, `m.json: $.ObjectsCopy: expected an object tree (a JSON object or array) or null`, false, 0, 0},
		{"task Objects true", `{"model": {"Objects": true}}`, `m.json: $.model.Objects: expected an object tree (a JSON object or array) or null`, false, 0, 0},
		{"empty input", ``, `m.json:1:1: invalid JSON at $: the input is empty; expected a JSON object or array`, true, 1, 1},
		{"white space only", "  \n\t ", `m.json:2:3: invalid JSON at $: the input is empty; expected a JSON object or array`, true, 2, 3},
		{"trailing garbage", `{"Objects": null} x`, `m.json:1:19: invalid JSON at $: unexpected 'x' after the top-level value`, true, 1, 19},
		{"two values", "{\"Objects\": null}\n{}", `m.json:2:1: invalid JSON at $: unexpected '{' after the top-level value`, true, 2, 1},
		{"trailing NUL", "{\"Objects\": null}\x00", `m.json:1:18: invalid JSON at $: unexpected byte 0x00 after the top-level value`, true, 1, 18},
		{"tab in a string", "{\"Objects\": \"a\tb\"}", `m.json:1:15: invalid JSON at $.Objects: control character 0x09 in a string; it must be escaped`, true, 1, 15},
		{"newline in a key", "{\"Obj\nects\": 1}", `m.json:1:6: invalid JSON at $: control character 0x0a in a string; it must be escaped`, true, 1, 6},
		{"bad escape", `{"Objects": "a\qb"}`, `m.json:1:15: invalid JSON at $.Objects: invalid escape \q in a string`, true, 1, 15},
		{"bad unicode escape", `{"Objects": "a\u12G4"}`, `m.json:1:15: invalid JSON at $.Objects: invalid \u escape in a string; expected four hex digits`, true, 1, 15},
		{"short unicode escape", `{"Objects": "\u12"}`, `m.json:1:14: invalid JSON at $.Objects: invalid \u escape in a string; expected four hex digits`, true, 1, 14},
		{"unterminated string", `{"Objects": "abc`, `m.json:1:17: invalid JSON at $.Objects: unexpected end of input in a string; expected '"'`, true, 1, 17},
		{"escape at the end", `{"Objects": "abc\`, `m.json:1:18: invalid JSON at $.Objects: unexpected end of input in a string escape`, true, 1, 18},
		{"truncated object", `{"Objects": {"a": 1`, `m.json:1:20: invalid JSON at $.Objects.a: unexpected end of input in an object; expected ',' or '}'`, true, 1, 20},
		{"truncated header", `{"Objects": {"?": {"id": "a"`, `m.json:1:29: invalid JSON at $.Objects["?"].id: unexpected end of input in an object; expected ',' or '}'`, true, 1, 29},
		{"bad literal", `{"Objects": nul}`, `m.json:1:13: invalid JSON at $.Objects: unexpected 'n'; expected null`, true, 1, 13},
		{"bad literal in a header", `{"Objects": {"?": {"id": nil}}}`, `m.json:1:26: invalid JSON at $.Objects["?"].id: unexpected 'n'; expected null`, true, 1, 26},
		{"bad destroyed literal", `{"Objects": {"?": {"destroyed": tru}}}`, `m.json:1:33: invalid JSON at $.Objects["?"].destroyed: unexpected 't'; expected true`, true, 1, 33},
		{"not JSON at all", `<html>`, `m.json:1:1: invalid JSON at $: unexpected '<'; expected a value`, true, 1, 1},
		{"a BOM", "\ufeff{}", `m.json:1:1: invalid JSON at $: the file starts with a UTF-8 byte-order mark (bytes EF BB BF); remove it: JSON text must not begin with one (RFC 8259 section 8.1) and Murano's engine refuses it`, true, 1, 1},
		{"multi-byte column", "{\"é\": x}", `m.json:1:8: invalid JSON at $["é"]: unexpected 'x'; expected a value`, true, 1, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, load := range loaders {
				if load.name == "LoadGraph" && tt.name == "ObjectsCopy a number" {
					continue // LoadGraph reads only Objects
				}
				err := load.fn(doc(tt.in))
				if err == nil {
					t.Fatalf("%s: no error", load.name)
				}
				if err.Error() != tt.want {
					t.Errorf("%s:\n got %s\nwant %s", load.name, err, tt.want)
				}
				var se *SyntaxError
				var me *ModelError
				switch {
				case tt.syntax && errors.As(err, &se):
					if se.Line != tt.line || se.Column != tt.col || se.File != "m.json" || se.Offset < 0 || se.Offset > len(tt.in) {
						t.Errorf("%s: %s offset %d line %d column %d, want %d %d", load.name, se.File, se.Offset, se.Line, se.Column, tt.line, tt.col)
					}
				case !tt.syntax && errors.As(err, &me):
					if me.File != "m.json" || !strings.HasPrefix(me.Path, "$") {
						t.Errorf("%s: file %q path %q", load.name, me.File, me.Path)
					}
				default:
					t.Errorf("%s: error %T, want syntax=%v", load.name, err, tt.syntax)
				}
			}
		})
	}
}

// loaders are the three entry points; each must reject bad input the
// same way.
var loaders = []struct {
	name string
	fn   func(*Document) error
}{
	{"LoadModel", func(d *Document) error { _, _, err := LoadModel(d); return err }},
	{"LoadSnapshot", func(d *Document) error { _, err := LoadSnapshot(d); return err }},
	{"LoadGraph", func(d *Document) error { _, err := LoadGraph(d); return err }},
}

func TestDeepNesting(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("[", 100000),
		strings.Repeat("[", 100000) + strings.Repeat("]", 100000),
		`{"Objects": ` + strings.Repeat(`{"a": `, 100000),
		`{"Objects": {"?": {"id": "x", "metadata": ` + strings.Repeat(`[`, 100000) + `}}}`,
		`{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [{"subscriber": "y", "extra": ` + strings.Repeat(`{"a": `, 100000) + `}]}}}}`,
	} {
		for _, load := range loaders {
			err := load.fn(doc(in))
			var me *ModelError
			if !errors.As(err, &me) || me.File != "m.json" || !strings.HasPrefix(me.Path, "$") ||
				me.Msg != "nesting deeper than 1000 levels; a Murano model nests far less" {
				t.Fatalf("%s(%.30s...) = %v", load.name, in, err)
			}
			// Deep paths keep their first and last segments.
			if len(me.Path) > 400 || !strings.Contains(me.Path, "...") {
				t.Errorf("path %q", me.Path)
			}
		}
	}
	// MaxDepth levels are fine: arrays, the object and its header.
	in := strings.Repeat("[", MaxDepth-2) + `{"?": {"id": "deep"}}` + strings.Repeat("]", MaxDepth-2)
	tr, err := LoadSnapshot(doc(in))
	if err != nil {
		t.Fatal(err)
	}
	if i, ok := tr.Lookup("deep"); !ok || !strings.HasPrefix(tr.ObjectPath(i), "$[0][0]") || !strings.Contains(tr.ObjectPath(i), "...") {
		t.Errorf("deep object: %v", tr.ObjectPath(i))
	}
}

// TestHugeString reads a 100 MiB JSON string as the whole input: it is
// rejected once the one pass over it is done, without copying it.
func TestHugeString(t *testing.T) {
	data := make([]byte, 100<<20)
	data[0] = 'a'
	for n := 1; n < len(data); n *= 2 {
		copy(data[n:], data[:n])
	}
	data[0], data[len(data)-1] = '"', '"'
	d := NewDocument("big.json", data)
	const want = "big.json: $: expected an object tree (a JSON object or array) or null"
	if _, err := LoadSnapshot(d); err == nil || err.Error() != want {
		t.Errorf("LoadSnapshot: %v", err)
	}
	if _, _, err := LoadModel(d); err == nil || !strings.HasPrefix(err.Error(), "big.json: $: expected a Murano envelope") {
		t.Errorf("LoadModel: %v", err)
	}
	// Unterminated, it is a syntax error at the end of the input.
	data[len(data)-1] = 'a'
	_, err := LoadSnapshot(d)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Offset != len(data) || se.Line != 1 || se.Column != len(data)+1 {
		t.Errorf("unterminated: %v", err)
	}
}

// TestTruncated loads every prefix of a real model: each must fail with
// an error naming the file, none may panic.
func TestTruncated(t *testing.T) {
	full := readModel(t, "environments-model-response.json").Data
	for n := 0; n < len(full); n++ {
		d := NewDocument("env.json", full[:n])
		for _, load := range loaders {
			err := load.fn(d)
			if err == nil {
				if json.Valid(full[:n]) {
					continue // all but the final newline
				}
				t.Fatalf("%s: prefix of %d bytes loaded", load.name, n)
			}
			if !strings.HasPrefix(err.Error(), "env.json:") {
				t.Fatalf("%s: prefix of %d bytes: %v", load.name, n, err)
			}
		}
	}
	// Same for an envelope and an engine task.
	for _, name := range []string{"../testdata/pairs/task-region-removed.json", "../testdata/pairs/region-removed-handlers.json"} {
		d, err := ReadDocument(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < len(d.Data); n += 7 {
			if _, _, err := LoadModel(NewDocument("p.json", d.Data[:n])); err == nil || !strings.HasPrefix(err.Error(), "p.json:") {
				t.Fatalf("%s: prefix of %d bytes: %v", name, n, err)
			}
		}
	}
}

// typeRE is the type regular expression of Murano's engine
// (murano/dsl/helpers.py); see docs/design.md, "The object model".
var typeRE = regexp.MustCompile(`^([a-zA-Z0-9_.]+)(?:/([^@]+))?(?:@([a-zA-Z0-9_.]+))?$`)

func checkParseType(t *testing.T, s string) {
	t.Helper()
	got, ok := ParseType(s)
	m := typeRE.FindStringSubmatch(s)
	if ok != (m != nil) {
		t.Fatalf("ParseType(%q) ok = %v, regexp matches = %v", s, ok, m != nil)
	}
	if m == nil {
		if got != (Type{}) {
			t.Fatalf("ParseType(%q) = %+v on failure", s, got)
		}
		return
	}
	if want := (Type{Name: m[1], Version: m[2], Package: m[3]}); got != want {
		t.Fatalf("ParseType(%q) = %+v, want %+v", s, got, want)
	}
	if got.String() != s {
		t.Fatalf("ParseType(%q).String() = %q", s, got.String())
	}
}

func TestParseType(t *testing.T) {
	tests := []struct {
		in   string
		want Type
		ok   bool
	}{
		{"io.murano.resources.LinuxMuranoInstance/0.0.0@io.murano", Type{"io.murano.resources.LinuxMuranoInstance", "0.0.0", "io.murano"}, true},
		{"io.murano.Environment", Type{Name: "io.murano.Environment"}, true},
		{"a/1", Type{Name: "a", Version: "1"}, true},
		{"a@p", Type{Name: "a", Package: "p"}, true},
		{"a/1.0-rc1+b/x y@p_q.r", Type{"a", "1.0-rc1+b/x y", "p_q.r"}, true},
		{"_/é", Type{"_", "é", ""}, true},
		{"a//", Type{"a", "/", ""}, true},
		{"", Type{}, false},
		{"a b", Type{}, false},
		{"x/@p", Type{}, false},
		{"x@", Type{}, false},
		{"@p", Type{}, false},
		{"/1", Type{}, false},
		{"a/", Type{}, false},
		{"a@b/c", Type{}, false},
		{"a@b@c", Type{}, false},
		{"a/1@b@c", Type{}, false},
		{"a@p-q", Type{}, false},
		{"a-b", Type{}, false},
		{"a\n", Type{}, false},
		{"a/1\n", Type{"a", "1\n", ""}, true},
		{"é", Type{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseType(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseType(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		checkParseType(t, tt.in)
	}
}

func FuzzParseType(f *testing.F) {
	for _, s := range []string{"io.murano.Environment/0.0.0@io.murano", "a", "a/b", "a@b", "a/b@c", "a/@", "@", "/", "a/b/c@d", "a@b@c", "a/\xff@b", "é/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkParseType(t, s)
	})
}

// TestEscapedKeys checks that keys are compared decoded, as JSON defines
// them: "\u003f" is the header key "?", "i\u0064" is "id".
func TestEscapedKeys(t *testing.T) {
	_, inc, err := LoadModel(doc(`{"Objects": {"\u003f": {"i\u0064": "a", "typ\u0065": "T", "destroye\u0064": true,
		"dependencie\u0073": {"onDestructio\u006e": [{"subscribe\u0072": "b", "handle\u0072": "h"}]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	i, ok := inc.Lookup("a")
	if !ok {
		t.Fatalf("no object a: %+v", inc.Objects)
	}
	o := inc.Objects[i]
	if inc.Type(i).Name != "T" || !o.Destroyed() || !reflect.DeepEqual(inc.Dependencies(i), []Dependency{{Subscriber: "b", Handler: "h", HasHandler: true}}) {
		t.Errorf("header read as %+v", o)
	}
}

// nilIfEmpty turns an empty record list into nil for comparisons.
func nilIfEmpty(d []Dependency) []Dependency {
	if len(d) == 0 {
		return nil
	}
	return d
}

// TestMergedDependenciesPerTree: the snapshot and the incoming tree of one
// envelope merge the records of their duplicate copies independently.
func TestMergedDependenciesPerTree(t *testing.T) {
	doc := NewDocument("m.json", []byte(`{
	  "Objects": [{"?": {"id": "a", "dependencies": {"onDestruction": [{"subscriber": "in1"}]}}},
	              {"?": {"id": "a", "dependencies": {"onDestruction": [{"subscriber": "in2"}]}}}],
	  "ObjectsCopy": [{"?": {"id": "a", "dependencies": {"onDestruction": [{"subscriber": "snap1"}]}}},
	                  {"?": {"id": "a", "dependencies": {"onDestruction": [{"subscriber": "snap2"}]}}}]}`))
	snap, in, err := LoadModel(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tree *Tree
		want []Dependency
	}{
		{snap, []Dependency{{Subscriber: "snap1"}, {Subscriber: "snap2"}}},
		{in, []Dependency{{Subscriber: "in1"}, {Subscriber: "in2"}}},
	} {
		i, _ := c.tree.Lookup("a")
		if got := c.tree.Dependencies(i); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: dependencies of a = %+v, want %+v", c.tree.Path, got, c.want)
		}
	}
}
