package snapshot

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/objgc/objgc/internal/jsonedit"
	"github.com/objgc/objgc/internal/modelgen"
)

// descendPath is the path finder PathsAt replaced (it rescans the
// enclosing copy for each value: quadratic), kept as the
// reference PathsAt must agree with on paths of at most 2*pathKeep
// segments.
func descendPath(t *Tree, off int) string {
	obj := t.ObjectAt(off)
	base, from, to := t.Path, t.Start, t.End
	if obj >= 0 {
		base, from, to = t.ObjectPath(obj), int(t.Objects[obj].Start), int(t.Objects[obj].End)
		if off == from {
			return base
		}
	}
	data := t.Doc.Data
	var b strings.Builder
	pos := from
	for pos < to && pos != off {
		switch data[pos] {
		case '{':
			pos = jsonedit.WS(data, pos+1)
			for pos < to && data[pos] == '"' {
				kend := jsonedit.String(data, pos)
				key := keyAt(data, pos)
				vstart := jsonedit.WS(data, jsonedit.WS(data, kend)+1)
				vend := jsonedit.Value(data, vstart)
				if off >= vstart && off < vend {
					jsonedit.WriteKey(&b, key)
					pos = vstart
					break
				}
				pos = jsonedit.WS(data, vend)
				if pos < to && data[pos] == ',' {
					pos = jsonedit.WS(data, pos+1)
				}
			}
		case '[':
			pos = jsonedit.WS(data, pos+1)
			for i := 0; pos < to && data[pos] != ']'; i++ {
				vend := jsonedit.Value(data, pos)
				if off >= pos && off < vend {
					b.WriteString("[" + strconv.Itoa(i) + "]")
					break
				}
				pos = jsonedit.WS(data, vend)
				if pos < to && data[pos] == ',' {
					pos = jsonedit.WS(data, pos+1)
				}
			}
		default:
			return base + b.String()
		}
	}
	return base + b.String()
}

// valueOffsets returns the offsets PathsAt is asked about in practice:
// every string value outside headers (references), every copy's start
// and its header's start, and the tree's start.
func valueOffsets(tr *Tree) []int {
	offs := []int{tr.Start}
	for i, o := range tr.Objects {
		offs = append(offs, int(o.Start), int(tr.HeaderStart(int32(i))))
	}
	tr.Strings(func(sv StringValue) bool {
		offs = append(offs, sv.Offset)
		return true
	})
	return offs
}

// checkPaths compares PathsAt with descendPath for every value offset of
// both trees of doc and returns how many paths it compared.
func checkPaths(t *testing.T, name string, data []byte) int {
	t.Helper()
	snap, inc, err := LoadModel(NewDocument(name, data))
	if err != nil {
		// A bare tree (one side of a pair).
		if inc, err = LoadGraph(NewDocument(name, data)); err != nil {
			return 0 // models that are bad on purpose
		}
		snap = emptyTree(inc.Doc, "$")
		snap.Null = true
	}
	n := 0
	for _, tr := range []*Tree{snap, inc} {
		if tr.Null {
			continue
		}
		offs := valueOffsets(tr)
		got := tr.PathsAt(offs)
		for k, off := range offs {
			if want := descendPath(tr, off); got[k] != want {
				t.Errorf("%s: path at %d = %s, want %s", name, off, got[k], want)
			}
			if p := tr.PathAt(off); p != got[k] {
				t.Errorf("%s: PathAt(%d) = %s, PathsAt gave %s", name, off, p, got[k])
			}
		}
		n += len(offs)
	}
	return n
}

// TestPathsAtMatchesDescend: on the repository's real models and small
// hostile shapes, the one-pass path finder names every reference, copy
// and header exactly as the rescanning one did.
func TestPathsAtMatchesDescend(t *testing.T) {
	files, _ := filepath.Glob("../testdata/models/*.json")
	pairs, _ := filepath.Glob("../testdata/pairs/*.json")
	if len(files) < 10 || len(pairs) < 5 {
		t.Fatalf("%d models in ../testdata/models, %d pairs in ../testdata/pairs: the committed fixtures are missing", len(files), len(pairs))
	}
	files = append(files, pairs...)
	total := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		total += checkPaths(t, f, data)
	}
	for _, s := range modelgen.Shapes {
		if s == modelgen.DeepPlain || s == modelgen.DeepCopies {
			continue // deeper than 2*pathKeep: TestPathsAtDeep
		}
		total += checkPaths(t, s.String(), modelgen.Hostile(s, 200))
	}
	total += checkPaths(t, "tricky", []byte(trickyModel))
	if total < 1000 {
		t.Fatalf("compared only %d paths", total)
	}
}

// trickyModel has escaped and non-identifier keys, empty containers,
// white space everywhere, references outside any copy's own members
// (inside plain objects and arrays between copies), copies nested through
// plain values, and a duplicate copy.
const trickyModel = `{ "Objects" : [ "r1" , { "?" : { "id" : "a" , "type" : "t.A" } ,
 "k\"q" : { "x y" : [ [ ] , { } , [ "r1" , { "1n" : "r1" , "é" : [ "r2" ] } ] ] } ,
 "own" : [ { "plain" : { "?" : { "id" : "b" , "type" : "t.B" } , "": "r1", "\u0041" : [ 1 , true , null , "r2" ] } } , "r1" ] ,
 "dup" : { "?" : { "id" : "b" , "type" : "t.B" } , "z" : "r2" } , "tail" : "r1" } , [ [ "r2" ] ] ] ,
 "ObjectsCopy" : { "?" : { "id" : "env" , "type" : "t.E" } , "l" : [ { "?" : { "id" : "r1" , "type" : "t.R" } } , { "?" : { "id" : "r2" , "type" : "t.R" } } ] } }`

// TestPathsAtExact pins the paths of trickyModel's references, so that
// PathsAt and the reference implementation cannot agree on a wrong path.
func TestPathsAtExact(t *testing.T) {
	_, inc, err := LoadModel(NewDocument("tricky", []byte(trickyModel)))
	if err != nil {
		t.Fatal(err)
	}
	var offs []int
	var vals []string
	inc.Strings(func(sv StringValue) bool {
		offs = append(offs, sv.Offset)
		vals = append(vals, sv.Value)
		return true
	})
	var got []string
	for k, p := range inc.PathsAt(offs) {
		got = append(got, vals[k]+" "+p)
	}
	want := []string{
		`r1 $.Objects[0]`,
		`r1 $.Objects[1]["k\"q"]["x y"][2][0]`,
		`r1 $.Objects[1]["k\"q"]["x y"][2][1]["1n"]`,
		`r2 $.Objects[1]["k\"q"]["x y"][2][1]["é"][0]`,
		`r1 $.Objects[1].own[0].plain[""]`,
		`r2 $.Objects[1].own[0].plain.A[3]`,
		`r1 $.Objects[1].own[1]`,
		`r2 $.Objects[1].dup.z`,
		`r1 $.Objects[1].tail`,
		`r2 $.Objects[2][0][0]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("paths:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPathsAtDeep: a path deeper than 2*pathKeep segments keeps its first
// and last pathKeep segments around "...", whether the depth comes from
// copies or from plain arrays and objects below the innermost copy (so
// that 60,000 references 900 levels deep do not make gigabytes of paths).
func TestPathsAtDeep(t *testing.T) {
	paths := doomedRefPaths(t, modelgen.DeepPlain, 3)
	if len(paths) != 3 {
		t.Fatalf("%d references, want 3", len(paths))
	}
	// $.Objects.holder.deep then [0]["k\"ey"] alternating, 900 levels,
	// then the index in the innermost array.
	head := `$.Objects.holder.deep` + strings.Repeat(`[0]["k\"ey"]`, 4) + `[0]`
	for k, p := range paths {
		want := head + `...` + strings.Repeat(`["k\"ey"][0]`, 5) + `["k\"ey"]` + "[" + strconv.Itoa(k) + "]"
		if p != want {
			t.Errorf("reference %d: path\n%s\nwant\n%s", k, p, want)
		}
	}

	// 300 nested copies, each holder.owns[0].next, each with one reference.
	paths = doomedRefPaths(t, modelgen.DeepCopies, 300)
	if len(paths) != 300 {
		t.Fatalf("%d references, want 300", len(paths))
	}
	for k, p := range paths {
		want := `$.Objects.holder` + strings.Repeat(`.owns[0].next`, k) + `.refs[0]`
		if segs := 2 + 3*k + 2; segs > 2*pathKeep {
			want = `$.Objects.holder.owns[0].next.owns[0].next.owns[0].next.owns` + `...` +
				`.next.owns[0].next.owns[0].next.owns[0].next.refs[0]`
		}
		if p != want {
			t.Errorf("reference in copy %d: path\n%s\nwant\n%s", k, p, want)
		}
	}
}

// doomedRefPaths returns the paths PathsAt gives the references to the
// doomed id of a hostile shape's incoming model, in document order.
func doomedRefPaths(t *testing.T, s modelgen.Shape, n int) []string {
	t.Helper()
	_, inc, err := LoadModel(NewDocument(s.String(), modelgen.Hostile(s, n)))
	if err != nil {
		t.Fatal(err)
	}
	var offs []int
	inc.Strings(func(sv StringValue) bool {
		if strings.Contains(sv.Value, "dead") {
			offs = append(offs, sv.Offset)
		}
		return true
	})
	return inc.PathsAt(offs)
}

// FuzzPathsAt: on any model the reader accepts, PathsAt names every
// reference, copy and header as the rescanning finder did, for paths short
// enough that neither cuts them.
func FuzzPathsAt(f *testing.F) {
	f.Add([]byte(trickyModel))
	for _, s := range modelgen.Shapes {
		f.Add(modelgen.Hostile(s, 3))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		snap, inc, err := LoadModel(NewDocument("fuzz", data))
		if err != nil {
			return
		}
		for _, tr := range []*Tree{snap, inc} {
			if tr.Null {
				continue
			}
			offs := valueOffsets(tr)
			for k, got := range tr.PathsAt(offs) {
				want := descendPath(tr, offs[k])
				if !strings.Contains(got, "...") && !strings.Contains(want, "...") && got != want {
					t.Fatalf("path at %d = %s, want %s", offs[k], got, want)
				}
			}
		}
	})
}

// BenchmarkPathsAt names the paths of 60,000 references to one doomed id
// held by one object (in one array, and 900 levels deep): the cost of
// diff's dangling references. Rescanning the object for each reference
// is quadratic in their count; PathsAt must stay linear.
func BenchmarkPathsAt(b *testing.B) {
	for _, s := range []modelgen.Shape{modelgen.OneArray, modelgen.DeepPlain, modelgen.DeepCopies} {
		_, inc, err := LoadModel(NewDocument(s.String(), modelgen.Hostile(s, 60_000)))
		if err != nil {
			b.Fatal(err)
		}
		var offs []int
		inc.Strings(func(sv StringValue) bool {
			offs = append(offs, sv.Offset)
			return true
		})
		b.Run(s.String(), func(b *testing.B) {
			b.SetBytes(int64(inc.End - inc.Start))
			for i := 0; i < b.N; i++ {
				if p := inc.PathsAt(offs); len(p) != len(offs) {
					b.Fatal(len(p))
				}
			}
		})
	}
}
