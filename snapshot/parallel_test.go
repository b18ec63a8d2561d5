package snapshot

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/objgc/objgc/internal/modelgen"
)

// loadResult is what the three loaders make of one input, in comparable
// form: each tree's objects (summarize), records and string values, or
// the loader's error.
type loadResult struct {
	Model, Snapshot, Graph []string
}

func treeResult(t *Tree) []string {
	var out []string
	for _, s := range summarize(t) {
		out = append(out, fmt.Sprintf("%+v", s))
	}
	for i := range t.Objects {
		out = append(out, fmt.Sprintf("deps %d %v dup %v path %s", i, t.Dependencies(int32(i)), t.First(int32(i)), t.ObjectPath(int32(i))))
	}
	t.Strings(func(sv StringValue) bool {
		out = append(out, fmt.Sprintf("str %d %q", sv.Offset, sv.Value))
		return true
	})
	return append(out, fmt.Sprintf("span %d %d null %v idless %v dups %v", t.Start, t.End, t.Null, t.IDless, t.Duplicates))
}

func loadAll(data []byte, parallelMin int) loadResult {
	var r loadResult
	d := NewDocument("m.json", data)
	d.parallelMin = parallelMin
	if s, i, err := LoadModel(d); err != nil {
		r.Model = []string{err.Error()}
	} else {
		r.Model = append(treeResult(s), treeResult(i)...)
	}
	if s, err := LoadSnapshot(d); err != nil {
		r.Snapshot = []string{err.Error()}
	} else {
		r.Snapshot = treeResult(s)
	}
	if g, err := LoadGraph(d); err != nil {
		r.Graph = []string{err.Error()}
	} else {
		r.Graph = treeResult(g)
	}
	// Every scanner and index builder left: a hash waiting for them
	// (Document.waitReaders) would wait for ever.
	if n := d.readers.Load(); n != 0 {
		r.Model = append(r.Model, fmt.Sprintf("%d readers left after loading", n))
	}
	return r
}

// checkParallelSame fails when reading data with the trees scanned in
// parallel (every "Objects" and "ObjectsCopy" value, parallelMin 1) gives
// anything but what the one-pass scanner gives: the same trees, records,
// strings and the same errors.
func checkParallelSame(t *testing.T, data []byte) {
	t.Helper()
	one := loadAll(data, 1<<62)
	par := loadAll(data, 1)
	for _, r := range []loadResult{one, par} {
		if l := r.Model[len(r.Model)-1]; strings.HasSuffix(l, "readers left after loading") {
			t.Fatal(l)
		}
	}
	if !reflect.DeepEqual(one, par) {
		for _, k := range []struct {
			name string
			o, p []string
		}{{"LoadModel", one.Model, par.Model}, {"LoadSnapshot", one.Snapshot, par.Snapshot}, {"LoadGraph", one.Graph, par.Graph}} {
			if !reflect.DeepEqual(k.o, k.p) {
				n := min(len(k.o), len(k.p), 5)
				t.Fatalf("%s: the parallel scan differs from the one-pass scan:\none pass (%d lines): %q\nparallel (%d lines): %q", k.name, len(k.o), k.o[:n], len(k.p), k.p[:n])
			}
		}
	}
}

// TestParallelScanSameAsOnePass reads the real models and pairs of
// testdata, a generated envelope, and broken copies of them (cut short,
// a byte changed, brackets unbalanced inside a tree) with the trees
// scanned in parallel and in one pass: the results and errors are the
// same (scan falls back to one pass when a tree's scan fails).
func TestParallelScanSameAsOnePass(t *testing.T) {
	var inputs [][]byte
	for _, pattern := range []string{"../testdata/models/*.json", "../testdata/pairs/*.json"} {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			t.Fatalf("no files match %s: %v", pattern, err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, data)
		}
	}
	var snap, inc bytes.Buffer
	if _, err := modelgen.Generate(&snap, &inc, modelgen.Config{Objects: 400, RemoveApps: 0.2, Seed: 3, Indent: true, DanglingRefs: 5}); err != nil {
		t.Fatal(err)
	}
	env := []byte(`{"Objects": ` + inc.String() + `, "ObjectsCopy": ` + snap.String() + `, "Attributes": []}`)
	task := []byte(`{"model": {"ObjectsCopy": ` + snap.String() + `, "Objects": ` + inc.String() + `}, "token": "x"}`)
	// A model object at the root with a key "Objects": read apart, its
	// objects must still be in the one tree.
	rootObj := []byte(`{"?": {"id": "root"}, "Objects": ` + snap.String() + `}`)
	inputs = append(inputs, env, task, rootObj)
	// Decoys for the guess of where the second tree starts (speculate):
	// a key "ObjectsCopy" or "Objects" nested in a tree near the middle
	// of the input, the key written in a string, the key escaped. The
	// guess is wrong or absent; the reading must be the one-pass one.
	pad := `"pad": [` + strings.Repeat(`"x", `, 2000) + `"x"]`
	decoyFirst := []byte(`{"Objects": {"?": {"id": "e"}, ` + pad + `, "sub": {"a": 1, "ObjectsCopy": {"?": {"id": "decoy"}, "r": "e"}}, ` + pad + `}, "ObjectsCopy": {"?": {"id": "e"}, "gone": {"?": {"id": "g"}}}, "Attributes": []}`)
	decoySecond := []byte(`{"model": {"ObjectsCopy": {"?": {"id": "e"}, "n": 1}, "Objects": {"?": {"id": "e"}, ` + pad + `, "x": 1, "Objects": [{"?": {"id": "nested"}}], ` + pad + `, ` + pad + `}}}`)
	inString := []byte(`{"Objects": {"?": {"id": "e"}, ` + pad + `, "s": "a, \"ObjectsCopy\": {", ` + pad + `}, "ObjectsCopy": ` + snap.String() + `}`)
	escaped := []byte(`{"Objects": ` + inc.String() + `, "Objects\u0043opy": ` + snap.String() + `}`)
	for _, d := range []struct {
		in      []byte
		from    int
		key, at string
	}{{decoyFirst, 12, "ObjectsCopy", `"ObjectsCopy": {"?": {"id": "decoy"}`}, {decoySecond, 40, "Objects", `"Objects": [{"?": {"id": "nested"}`}} {
		if k, _ := guessKey(d.in, d.from, d.key); k < 0 || !bytes.HasPrefix(d.in[k:], []byte(d.at)) {
			t.Fatalf("the decoy is not what speculate guesses: %d", k)
		}
	}
	inputs = append(inputs, decoyFirst, decoySecond, inString, escaped)
	// Broken copies of the generated inputs and of two real pairs (the
	// pairs are the last files read): every error path of the parallel
	// scan, at a tenth of the cost of breaking every input.
	real := len(inputs) - 3
	for _, in := range append(inputs[real-2:real:real], env, task, rootObj) {
		n := len(in)
		broken := [][]byte{
			in[:n/2], // cut short
			in[:n-1], // the last bracket missing
			append(append(bytes.Clone(in[:n/3]), ']'), in[n/3:]...), // a bracket too many
			append(append(bytes.Clone(in[:n/3]), '"'), in[n/3:]...), // a quote too many
			bytes.Replace(in, []byte(`"?"`), []byte(`"?" `), 1),
			bytes.Replace(in, []byte(`"id"`), []byte(`"id\u0000"`), 1),
		}
		inputs = append(inputs, broken...)
	}
	for i, in := range inputs {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkParallelSame(t, in) })
	}
}

// TestGuessKey pins where speculate guesses the second tree of an
// envelope starts: the quoted key written as a member after another one,
// followed by an object or an array, nearest the middle; not a key
// written inside a string, nor one followed by another value.
func TestGuessKey(t *testing.T) {
	pad := strings.Repeat(" ", 3*guessWindow)
	for _, tc := range []struct {
		name string
		data string
		want string // the text at the guessed key, "" for no guess
	}{
		{"plain", `{"Objects": {"a": 1}, "ObjectsCopy": {"b": 2}}`, `"ObjectsCopy": {"b"`},
		{"array", `{"Objects": [], "ObjectsCopy" :` + "\n" + `[1]}`, `"ObjectsCopy" :`},
		{"null", `{"Objects": {"a": 1}, "ObjectsCopy": null}`, ""},
		{"first member", `{"ObjectsCopy": {"b": 2}}`, ""},
		{"in a string", `{"Objects": {"s": "x, \"ObjectsCopy\": {"}, "z": 1}`, ""},
		{"nearest the middle", `{"Objects": {"x": 1, "ObjectsCopy": {"far": 1}` + pad + `, "ObjectsCopy": {"near": 1}` + pad + pad + `}}`, `"ObjectsCopy": {"near"`},
		{"after the middle", `{"Objects": {"x": 1` + pad + pad + `, "ObjectsCopy": {"late": 1}}}`, `"ObjectsCopy": {"late"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.data)
			key, value := guessKey(data, 12, "ObjectsCopy")
			got := ""
			if key >= 0 {
				got = string(data[key:min(key+len(tc.want), len(data))])
				if data[value] != '{' && data[value] != '[' {
					t.Errorf("value at %d is %q", value, data[value])
				}
			}
			if got != tc.want {
				t.Errorf("guessed %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSpeculationAdopted checks that an envelope's second tree is read by
// a scanner of its own when the guess holds (the common case), and read
// by the one scanner when the guess is a decoy.
func TestSpeculationAdopted(t *testing.T) {
	var snap, inc bytes.Buffer
	if _, err := modelgen.Generate(&snap, &inc, modelgen.Config{Objects: 200, RemoveApps: 0.2, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	env := []byte(`{"Objects": ` + inc.String() + `, "ObjectsCopy": ` + snap.String() + `}`)
	idx, err := scanWith(parallelDoc("m.json", env), true)
	if err != nil || idx == nil {
		t.Fatalf("scan: %v", err)
	}
	if len(idx.subs) != 1 || !idx.subs[0].adopted || idx.subs[0].start != bytes.Index(env, []byte(`"ObjectsCopy": `))+len(`"ObjectsCopy": `) {
		t.Fatalf("the second tree was not read apart: %d scans", len(idx.subs))
	}
	pad := func(k string) string { return `"` + k + `": [` + strings.Repeat(`"x", `, 2000) + `"x"]` }
	decoy := []byte(`{"Objects": {"?": {"id": "e"}, ` + pad("pad1") + `, "sub": {"a": 1, "ObjectsCopy": {"?": {"id": "decoy"}}}, ` + pad("pad2") + `, ` + pad("pad3") + `}, "ObjectsCopy": {"?": {"id": "e"}}}`)
	if k, _ := guessKey(decoy, 12, "ObjectsCopy"); !bytes.HasPrefix(decoy[k:], []byte(`"ObjectsCopy": {"?": {"id": "decoy"}`)) {
		t.Fatalf("the decoy is not what speculate guesses: %d", k)
	}
	idx, err = scanWith(parallelDoc("m.json", decoy), true)
	if err != nil || idx == nil {
		t.Fatalf("scan: %v", err)
	}
	if len(idx.subs) != 0 {
		t.Fatalf("a scan of the decoy was kept: %d scans", len(idx.subs))
	}
	if n := len(idx.objects); n != 3 {
		t.Fatalf("%d objects read, want 3", n)
	}
}

// parallelDoc is NewDocument with every envelope tree scanned apart.
func parallelDoc(name string, data []byte) *Document {
	d := NewDocument(name, data)
	d.parallelMin = 1
	return d
}
