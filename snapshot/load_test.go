package snapshot

import (
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

// typeRE is the type regular expression of Murano's engine
// (murano/dsl/helpers.py); see docs/design.md, "The object model".
var typeRE = regexp.MustCompile(`^([a-zA-Z0-9_.]+)(?:/([^@]+))?(?:@([a-zA-Z0-9_.]+))?$`)

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
