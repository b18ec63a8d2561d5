package snapshot

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/objgc/objgc/internal/jsonedit"
	"github.com/objgc/objgc/internal/modelgen"
)

// rootSegs returns the path of every object of data, by its offset, as
// one rendered segment per level, found in one descent from the document's
// root: a reference that shares nothing with the reader's segment records
// (Object.bits).
func rootSegs(data []byte) map[int][]string {
	paths := map[int][]string{}
	var walk func(pos int, segs []string) int
	walk = func(pos int, segs []string) int {
		switch data[pos] {
		case '{':
			paths[pos] = slices.Clone(segs)
			pos = jsonedit.WS(data, pos+1)
			for data[pos] == '"' {
				var b strings.Builder
				jsonedit.WriteKey(&b, keyAt(data, pos))
				kend := jsonedit.String(data, pos)
				pos = walk(jsonedit.WS(data, jsonedit.WS(data, kend)+1), append(segs, b.String()))
				if pos = jsonedit.WS(data, pos); data[pos] == ',' {
					pos = jsonedit.WS(data, pos+1)
				}
			}
			return pos + 1
		case '[':
			pos = jsonedit.WS(data, pos+1)
			for i := 0; data[pos] != ']'; i++ {
				pos = walk(pos, append(segs, "["+strconv.Itoa(i)+"]"))
				if pos = jsonedit.WS(data, pos); data[pos] == ',' {
					pos = jsonedit.WS(data, pos+1)
				}
			}
			return pos + 1
		}
		return jsonedit.Value(data, pos)
	}
	walk(jsonedit.WS(data, 0), nil)
	return paths
}

// cutPath renders segments as renderCut does: a path of more than
// 2*pathKeep segments keeps pathKeep at each end.
func cutPath(segs []string) string {
	if len(segs) > 2*pathKeep {
		return "$" + strings.Join(segs[:pathKeep], "") + "..." + strings.Join(segs[len(segs)-pathKeep:], "")
	}
	return "$" + strings.Join(segs, "")
}

// checkObjectPaths compares ObjectPath and Depth of every copy of both
// trees of a model (or of a bare tree) with rootSegs, read in one pass and
// with the trees scanned in parallel, and returns how many copies it
// compared.
func checkObjectPaths(t *testing.T, name string, data []byte) int {
	t.Helper()
	n := checkObjectPathsOnce(t, name, data, 1<<62)
	return n + checkObjectPathsOnce(t, name+" (parallel)", data, 1)
}

// checkObjectPathsOnce is checkObjectPaths of data read with
// Document.parallelMin parallelMin.
func checkObjectPathsOnce(t *testing.T, name string, data []byte, parallelMin int) int {
	t.Helper()
	doc := NewDocument(name, data)
	doc.parallelMin = parallelMin
	var trees []*Tree
	if snap, inc, err := LoadModel(doc); err == nil {
		trees = []*Tree{snap, inc}
	} else if inc, err := LoadGraph(doc); err == nil {
		trees = []*Tree{inc}
	} else {
		return 0 // models that are bad on purpose
	}
	n := 0
	paths := rootSegs(data)
	for _, tr := range trees {
		for i := range tr.Objects {
			want := paths[int(tr.Objects[i].Start)]
			if got := tr.ObjectPath(int32(i)); got != cutPath(want) {
				t.Errorf("%s: copy %d (%s): path %s, want %s", name, i, tr.ID(int32(i)), got, cutPath(want))
			}
			if d := tr.Depth(int32(i)); d != len(want) {
				t.Errorf("%s: copy %d (%s): depth %d, want %d", name, i, tr.ID(int32(i)), d, len(want))
			}
			n++
		}
	}
	return n
}

// anchorModel puts headers where the reader cannot anchor on them (after
// an object's nested copies, so that theirs are recorded from a copy
// further up, on an envelope's root, on an engine task's
// "model"), nests copies through plain objects and arrays, and holds a
// chain of copies deeper than 2*pathKeep.
func anchorModel() map[string]string {
	deep := `{"?": {"id": "leaf", "type": "t.L"}}`
	for i := 29; i >= 0; i-- {
		if i%3 == 0 {
			deep = `{"plain": [` + deep + `]}` // no header: not an anchor
		} else {
			deep = `{"?": {"id": "c` + strconv.Itoa(i) + `", "type": "t.C"}, "next": ` + deep + `}`
		}
	}
	late := `{"a": {"b": [{"?": {"id": "inner", "type": "t.I"}, "x": {"?": {"id": "inner2", "type": "t.I"}}}]}, "?": {"id": "late", "type": "t.L"}}`
	return map[string]string{
		"envelope":          `{"Objects": {"?": {"id": "env", "type": "t.E"}, "apps": [` + late + `, ` + deep + `, {"?": {"id": "holder", "type": "t.H"}, "l": ` + late + `}]}, "ObjectsCopy": null}`,
		"root header":       `{"?": {"id": "root", "type": "t.R"}, "Objects": {"?": {"id": "env", "type": "t.E"}, "l": [{"k": {"?": {"id": "x", "type": "t.X"}, "y": [` + late + `]}}]}, "ObjectsCopy": {"?": {"id": "env", "type": "t.E"}, "m": ` + late + `}}`,
		"task model header": `{"model": {"?": {"id": "m", "type": "t.M"}, "Objects": {"?": {"id": "env", "type": "t.E"}, "n": {"o": ` + deep + `}}, "ObjectsCopy": {"?": {"id": "env", "type": "t.E"}}}}`,
		"bare":              `{"?": {"id": "env", "type": "t.E"}, "p": [[` + late + `], {"q": ` + deep + `}]}`,
		"bare array":        `[` + late + `, [` + deep + `]]`,
	}
}

// TestObjectPathsFromRoot: a copy's path is recorded as a few segments
// after those of an enclosing copy (Object.bits); put back together it
// is the path found by descending from the root, on the committed models,
// the hostile shapes (the deep ones too) and models whose headers come
// late or sit above the trees.
func TestObjectPathsFromRoot(t *testing.T) {
	files, _ := filepath.Glob("../testdata/models/*.json")
	pairs, _ := filepath.Glob("../testdata/pairs/*.json")
	if len(files) < 10 || len(pairs) < 5 {
		t.Fatalf("%d models in ../testdata/models, %d pairs in ../testdata/pairs: the committed fixtures are missing", len(files), len(pairs))
	}
	total := 0
	for _, f := range append(files, pairs...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		total += checkObjectPaths(t, f, data)
	}
	for _, s := range modelgen.Shapes {
		total += checkObjectPaths(t, s.String(), modelgen.Hostile(s, 200))
	}
	for name, m := range anchorModel() {
		if n := checkObjectPaths(t, name, []byte(m)); n < 4 {
			t.Errorf("%s: %d copies compared; the model did not load", name, n)
		} else {
			total += n
		}
	}
	total += checkObjectPaths(t, "tricky", []byte(trickyModel))
	if total < 1000 {
		t.Fatalf("compared only %d paths", total)
	}
}

// TestSegmentsStayFew: a chain of copies nested 300 deep records a few
// segments a copy, not its depth (the full paths grew with the square of
// the nesting).
func TestSegmentsStayFew(t *testing.T) {
	_, inc, err := LoadModel(NewDocument("deep", modelgen.Hostile(modelgen.DeepCopies, 300)))
	if err != nil {
		t.Fatal(err)
	}
	depths := 0
	for i := range inc.Objects {
		depths += inc.Depth(int32(i))
	}
	if len(inc.Objects) < 300 || depths < 300*300 {
		t.Fatalf("%d copies, total depth %d: not the deep shape", len(inc.Objects), depths)
	}
	if got := len(inc.segs); got > 4*len(inc.Objects) {
		t.Errorf("%d segments recorded for %d copies of total depth %d", got, len(inc.Objects), depths)
	}
}

// TestObjectPathReadsNoDocument: the keys on the way to the copies are
// rendered once, when read (flatIndex.keySegs), so that a path is
// rendered without reading the document (whose pages a mapped model
// releases): the paths are the same with the document blanked out. Past
// maxKeys distinct keys, paths are read from the document and still right.
func TestObjectPathReadsNoDocument(t *testing.T) {
	data, err := os.ReadFile("../testdata/pairs/wordpress-app-removed.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string][]byte{"wordpress": data, "escaped keys": []byte(`{"Objects": {"?": {"id": "e"}, "a\"b": {"c\u00e9": [{"?": {"id": "x"}}], "d": {"?": {"id": "y"}, "a\"b": {"?": {"id": "z"}}}}}, "ObjectsCopy": null}`)} {
		snap, inc, err := LoadModel(NewDocument(name, bytes.Clone(m)))
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, tr := range []*Tree{snap, inc} {
			for i := range tr.Objects {
				want = append(want, tr.ObjectPath(int32(i)))
			}
		}
		for i := range inc.Doc.Data {
			inc.Doc.Data[i] = ' '
		}
		var got []string
		for _, tr := range []*Tree{snap, inc} {
			for i := range tr.Objects {
				got = append(got, tr.ObjectPath(int32(i)))
			}
		}
		if !slices.Equal(got, want) || len(want) < 3 {
			t.Errorf("%s: paths with the document blanked out:\n%q\nwant\n%q", name, got, want)
		}
	}

	var b strings.Builder
	b.WriteString(`{"Objects": {"?": {"id": "e"}`)
	for i := range maxKeys + 100 {
		fmt.Fprintf(&b, `, "k%d": [{"?": {"id": "o%d"}}]`, i, i)
	}
	b.WriteString(`}, "ObjectsCopy": null}`)
	if n := checkObjectPaths(t, "many keys", []byte(b.String())); n < 2*(maxKeys+100) {
		t.Fatalf("%d paths compared", n)
	}
}

// TestObjectSize: an Object is the largest part of a plan's memory after
// the input (two million on the 1M model): 40 bytes, with the end of its
// header, the end of its path segments, its owner and first copy not
// kept, its records and legacy keys beside it and its flags in bits, so
// that a million-object model fits its memory bound. A field added must be
// worth a million times its size.
func TestObjectSize(t *testing.T) {
	if n := unsafe.Sizeof(Object{}); n > 40 {
		t.Fatalf("an Object takes %d bytes, more than 40", n)
	}
}

// TestEstimateObjects: the index is sized from a count of '?' bytes (of
// all of a small input, of four samples of a large one) and the ids'
// mean length in the same bytes, so that room reserved and never written,
// which the garbage collector counts as live, stays small.
func TestEstimateObjects(t *testing.T) {
	tiny := func(n int) []byte {
		var b bytes.Buffer
		if err := modelgen.Tiny(&b, n); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	var snap, inc bytes.Buffer
	if _, err := modelgen.Generate(&snap, &inc, modelgen.Config{Objects: 2000, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		data       []byte
		lo, hi     int // the objects estimated
		idLo, idHi int
	}{
		{"tiny 100k", tiny(100_000), 100_001, 100_002, 10, 10},
		{"tiny 500k (sampled)", tiny(500_000), 500_000, 625_000, 10, 10},
		{"generated", snap.Bytes(), 2000, 2100, 32, 32},
		{"no ids", []byte(`{"Objects": {"?": {"type": "t.A"}}}`), 1, 1, 32, 32},
		{"cut short", []byte(`{"?": {"id": "abc`), 1, 1, 32, 32},
	} {
		n, idLen := estimateObjects(c.data, false)
		if n < c.lo || n > c.hi || idLen < c.idLo || idLen > c.idHi {
			t.Errorf("%s: %d objects with ids of %d bytes, want %d to %d objects, ids of %d to %d", c.name, n, idLen, c.lo, c.hi, c.idLo, c.idHi)
		}
	}
}

// TestSubset: an index of some objects finds those, by the ids of their
// first copies, and no other.
func TestSubset(t *testing.T) {
	var snap, incoming bytes.Buffer
	if _, err := modelgen.Generate(&snap, &incoming, modelgen.Config{Objects: 2000, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	inc, err := LoadGraph(NewDocument("generated", snap.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var some []int32
	in := map[int32]bool{}
	for i := range inc.Objects {
		if o := inc.Objects[i]; o.HasID() && o.IsFirst() && i%3 == 0 {
			some, in[int32(i)] = append(some, int32(i)), true
		}
	}
	var ids []string
	for i := range inc.Objects {
		ids = append(ids, inc.ID(int32(i)))
	}
	ids = append(ids, "no-such-id", "")
	found := make([]int32, len(ids))
	inc.Subset(some).LookupAll(ids, found)
	hits := 0
	for k, id := range ids {
		want := int32(-1)
		if f, ok := inc.Lookup(id); ok && in[f] {
			want = f
		}
		if found[k] != want {
			t.Fatalf("%q: found %d, want %d", id, found[k], want)
		}
		if want >= 0 {
			hits++
		}
	}
	if len(some) < 50 || hits < len(some) {
		t.Fatalf("%d objects in the subset, %d ids found", len(some), hits)
	}
}

// TestHeaderFarFromStart: a header more than 64 KiB after its object's
// first byte does not fit Object.hdr; HeaderStart still finds it, in
// both trees of the envelope and in a copy nested in such an object.
func TestHeaderFarFromStart(t *testing.T) {
	pad := strings.Repeat("x", 70000)
	m := `{"Objects": {"pad": "` + pad + `", "?": {"id": "e", "type": "T"}, "a": {"?": {"id": "a", "type": "T"}}, "b": {"p": "` + pad + pad + `", "?": {"id": "b", "type": "T"}}},` +
		` "ObjectsCopy": {"pad": "` + pad + `", "?": {"id": "e", "type": "T"}}}`
	snap, inc, err := LoadModel(NewDocument("far.json", []byte(m)))
	if err != nil {
		t.Fatal(err)
	}
	far := 0
	for _, tr := range []*Tree{snap, inc} {
		for i := range tr.Objects {
			o := &tr.Objects[i]
			hs := int(tr.HeaderStart(int32(i)))
			want := strings.Index(m[o.Start:o.End], `"?": {"id": "`+tr.ID(int32(i))+`"`) + int(o.Start) + len(`"?": `)
			if hs != want {
				t.Errorf("%s: header at %d, want %d", tr.ObjectPath(int32(i)), hs, want)
			}
			if o.hdr == hdrFar {
				far++
			}
		}
	}
	if far != 3 {
		t.Errorf("%d headers far from their start, want 3", far)
	}
}

// TestLaterCopies: a later copy's first copy and owner are found through
// the tree's side table (Tree.First, Tree.Owner); first copies and
// id-less objects are their own first copy.
func TestLaterCopies(t *testing.T) {
	m := `{"Objects": [{"?": {"id": "x"}, "k": {"?": {"id": "y"}}}, {"n": [{"?": {"id": "x"}, "k": {"?": {"id": "y"}}}, {"?": {"id": "y"}}]}, {"?": {"id": "z"}}], "ObjectsCopy": null}`
	_, inc, err := LoadModel(NewDocument("copies.json", []byte(m)))
	if err != nil {
		t.Fatal(err)
	}
	x, _ := inc.Lookup("x")
	y, _ := inc.Lookup("y")
	later := 0
	for i := range inc.Objects {
		k := int32(i)
		f := inc.First(k)
		switch id := inc.ID(k); {
		case id == "":
			if f != k || !inc.Objects[k].IsFirst() {
				t.Errorf("id-less %s: first %d", inc.ObjectPath(k), f)
			}
		case id == "x" && f != x, id == "y" && f != y:
			t.Errorf("%s: first copy %s", inc.ObjectPath(k), inc.ObjectPath(f))
		case f != k:
			later++
			if inc.Objects[k].IsFirst() {
				t.Errorf("%s: IsFirst for a later copy", inc.ObjectPath(k))
			}
		}
		if inc.ID(k) == "y" && inc.Enclosing(k) >= 0 && inc.ID(inc.Enclosing(k)) == "x" && inc.Owner(k) != x {
			t.Errorf("%s: owner %d, want x's first copy %d", inc.ObjectPath(k), inc.Owner(k), x)
		}
	}
	if later != 3 {
		t.Errorf("%d later copies, want 3", later)
	}
}
