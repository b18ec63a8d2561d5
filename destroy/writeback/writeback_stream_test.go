package writeback

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/internal/golden"
	"github.com/objgc/objgc/internal/jsonedit"
	"github.com/objgc/objgc/internal/modelgen"
	"github.com/objgc/objgc/internal/peakrss"
	"github.com/objgc/objgc/internal/plantest"
	"github.com/objgc/objgc/snapshot"
)

// The streamed write-back must write, byte for byte, what the write-back
// built whole in memory wrote. testdata/want holds each output below as
// that write-back (commit 6528557) wrote it: the whole output for the
// real models, an object diff for the generated ones (objectDiff says why);
// go test -update rewrites them from the code as it is.

// wbCase is one write-back: a plan, what the run did, and the flags.
type wbCase struct {
	name  string
	p     *order.Plan
	out   Effects
	attrs json.RawMessage
	keep  bool
}

// wbModels returns the model files the equivalence test derives cases
// from: the pairs, the copied real models, and the whole collection of
// real models in testdata/models (its README gives their
// origins), by a name relative to their folder.
func wbModels(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	add := func(prefix, dir string, recurse bool) {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path != dir && !recurse {
				return filepath.SkipDir
			}
			if d.IsDir() || filepath.Ext(path) != ".json" {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			out[prefix+filepath.ToSlash(rel)] = data
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	add("pairs/", filepath.Join("..", "..", "testdata", "pairs"), false)
	add("models/", filepath.Join("..", "..", "testdata", "models"), false)
	add("real/", filepath.Join("testdata", "models"), true)
	return out
}

// generatedModels returns envelopes made by internal/modelgen: indented
// and compact, with dangling references left to removed applications.
func generatedModels(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for _, cfg := range []modelgen.Config{
		{Objects: 3000, RemoveApps: 0.3, Seed: 7, Indent: true, DanglingRefs: 25},
		{Objects: 2000, RemoveApps: 0.2, Seed: 3, DanglingRefs: 10},
	} {
		var snap, in bytes.Buffer
		if _, err := modelgen.Generate(&snap, &in, cfg); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("gen/%d-indent=%v", cfg.Objects, cfg.Indent)
		out[name] = []byte(`{"Objects": ` + in.String() + `, "ObjectsCopy": ` + snap.String() + `, "Attributes": []}`)
	}
	return out
}

// wbCases derives write-backs from each model: the model as it is (when
// it is a pair), and a pair made from its snapshot tree with every third
// object removed from the incoming side (their references stay:
// --on-dangling=keep), each with every doomed object destroyed, with
// every other one failed, with handler patches (new properties,
// references to doomed ids re-written in full, the root patched), and
// with destroyed objects nothing holds (dropped).
func wbCases(t *testing.T, models map[string][]byte) []wbCase {
	t.Helper()
	var cases []wbCase
	names := make([]string, 0, len(models))
	for n := range models {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		data := models[name]
		doc := snapshot.NewDocument(name, data)
		if snap, in, err := snapshot.LoadModel(doc); err == nil && !snap.Null && len(snap.Objects) > 0 {
			p := order.NewPlan(plantest.Compare(snap, in))
			if len(p.Objects) > 0 || len(p.Diff.Dropped) > 0 {
				cases = append(cases, wbOutcomes(name, p, envAttrs(in), nil)...)
			}
		}
		snap, err := snapshot.LoadSnapshot(doc)
		if err != nil || snap.Null || len(snap.Objects) < 3 {
			continue
		}
		for _, drop := range []bool{false, true} {
			env, ok := derivePair(snap, drop)
			if !ok {
				continue
			}
			p := planOf(t, name, env)
			if len(p.Objects) == 0 {
				continue
			}
			cases = append(cases, wbOutcomes(fmt.Sprintf("%s/derived-drop=%v", name, drop), p, nil, patchesFor(p))...)
		}
	}
	return cases
}

func planOf(t *testing.T, name string, env []byte) *order.Plan {
	t.Helper()
	snap, in, err := snapshot.LoadModel(snapshot.NewDocument(name, env))
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, env)
	}
	return order.NewPlan(plantest.Compare(snap, in))
}

func envAttrs(in *snapshot.Tree) json.RawMessage {
	if env := in.Envelope; env != nil && env.Attributes != nil {
		raw := in.Doc.Data[env.Attributes.Start:env.Attributes.End]
		if len(raw) > 0 && raw[0] == '[' {
			return raw
		}
	}
	return nil
}

// wbOutcomes returns the cases of plan p: every doomed object destroyed,
// every other one failed, and, given patches, both again with them.
func wbOutcomes(name string, p *order.Plan, attrs json.RawMessage, patches map[string][]json.RawMessage) []wbCase {
	keep := len(p.Diff.Dangling) > 0
	all := make([]bool, len(p.Objects))
	half := make([]bool, len(p.Objects))
	for i := range all {
		all[i] = true
		half[i] = i%2 == 1
	}
	var out []wbCase
	variants := []map[string][]json.RawMessage{nil}
	if patches != nil {
		variants[0] = patches
	}
	for _, pt := range variants {
		tag := ""
		if pt != nil {
			tag = "/patched"
		}
		out = append(out,
			wbCase{name: name + tag + "/all-destroyed", p: p, out: Effects{Destroyed: all, Patches: pt}, attrs: attrs, keep: keep},
			wbCase{name: name + tag + "/half-failed", p: p, out: Effects{Destroyed: half, Patches: pt}, attrs: attrs, keep: keep})
	}
	if patches != nil {
		out = append(out, wbCase{name: name + "/unpatched/half-failed", p: p, out: Effects{Destroyed: half}, attrs: attrs, keep: keep})
	}
	return out
}

// derivePair returns an envelope whose ObjectsCopy is snap's tree and
// whose Objects is the same less every third object with an id (and all
// of its copies); with drop, Objects is an array of that tree and a
// destroyed copy of the first removed object, which nothing holds.
func derivePair(snap *snapshot.Tree, drop bool) ([]byte, bool) {
	data := snap.Doc.Data
	r := jsonedit.NewRewriter(data)
	removed := map[string]bool{}
	var first int32 = -1
	for k := range snap.Objects {
		o := &snap.Objects[k]
		if !o.HasID() || snap.Enclosing(int32(k)) < 0 || !o.IsFirst() || k%3 != 1 {
			continue
		}
		removed[snap.ID(int32(k))] = true
		if first < 0 {
			first = int32(k)
		}
	}
	if len(removed) == 0 {
		return nil, false
	}
	for k := range snap.Objects {
		o := &snap.Objects[k]
		if o.HasID() && removed[snap.ID(int32(k))] {
			if c := data[jsonedit.WS(data, int(o.Start))]; c == '{' && isMember(snap, int32(k)) {
				r.At(int(o.Start)).Remove = true
			}
		}
	}
	var in bytes.Buffer
	if err := r.Value(&in, snap.Start, snap.End); err != nil {
		return nil, false
	}
	objects := in.String()
	if drop {
		o := &snap.Objects[first]
		var flagged bytes.Buffer
		fr := jsonedit.NewRewriter(data)
		fr.At(int(snap.HeaderStart(first))).Write = func(b jsonedit.Writer, s, e int) error { return flagHeader(b, data, s) }
		if err := fr.Value(&flagged, int(o.Start), int(o.End)); err != nil {
			return nil, false
		}
		objects = "[" + objects + ", " + flagged.String() + "]"
	}
	return []byte(`{"Objects": ` + objects + `, "ObjectsCopy": ` + string(data[snap.Start:snap.End]) + `, "Attributes": []}`), true
}

// isMember reports whether copy k is a member of an object or an element
// of an array (not the root), which Rewriter can remove.
func isMember(t *snapshot.Tree, k int32) bool { return int(t.Objects[k].Start) != t.Start }

// patchesFor returns handler patches for plan p: on the root object and
// on two others of the incoming model, adding properties, one holding a
// doomed id (a re-reference), one an object with a null member, and a
// second patch to the same subscriber removing what the first added.
func patchesFor(p *order.Plan) map[string][]json.RawMessage {
	in := p.Diff.Incoming
	if in.Null || len(p.Objects) == 0 {
		return nil
	}
	doomed := p.ID(0)
	other := p.ID(len(p.Objects) - 1)
	var subs []string
	for k := len(in.Objects) - 1; k >= 0 && len(subs) < 3; k-- { // the root first
		o := &in.Objects[k]
		if o.HasID() && o.IsFirst() && !o.Destroyed() {
			subs = append(subs, in.ID(int32(k)))
		}
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	out := map[string][]json.RawMessage{}
	for k, s := range subs {
		switch k {
		case 0:
			out[s] = []json.RawMessage{json.RawMessage(`{"objgcNote": "root patched", "objgcRefs": [` + q(other) + `]}`)}
		case 1:
			out[s] = []json.RawMessage{
				json.RawMessage(`{"objgcRef": ` + q(doomed) + `, "objgcMeta": {"a": 1, "b": null, "c": [true, ` + q(other) + `]}}`),
				json.RawMessage(`{"objgcMeta": {"a": null, "d": "x"}}`),
			}
		default:
			out[s] = []json.RawMessage{json.RawMessage(`{"objgcRef": ` + q(doomed) + `}`)}
		}
	}
	return out
}

// wantPath is the golden file of case name's output: testdata/want/ and
// the name, then .json (the output), .diff (its object diff, for a
// generated model) or .error (the error, when there is no output).
func wantPath(name, ext string) string {
	return filepath.Join("testdata", "want", filepath.FromSlash(name)+ext)
}

// objectDiff describes out, the write-back of the envelope input, for a
// reader, where the output itself is too large to keep (the outputs of
// the generated models are 26 MB together): its sha256 and size, which
// pin its bytes, then what it changed object by object: Objects against
// the input's Objects (- a copy gone with a dropped object, + a destroyed
// object written in full), ObjectsCopy against the output's Objects (+ a
// failed or blocked object put back), and the rows of Attributes.
func objectDiff(t *testing.T, input, out []byte) []byte {
	t.Helper()
	_, inObjects, err := snapshot.LoadModel(snapshot.NewDocument("input", input))
	if err != nil {
		t.Fatal(err)
	}
	outCopy, outObjects, err := snapshot.LoadModel(snapshot.NewDocument("output", out))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "sha256 %x, %d bytes\n", sha256.Sum256(out), len(out))
	b.WriteString("\nObjects, against the input's Objects:\n")
	copyDiff(&b, inObjects, outObjects)
	b.WriteString("\nObjectsCopy, against the output's Objects:\n")
	copyDiff(&b, outObjects, outCopy)
	var rows [2]int
	for k, doc := range [][]byte{input, out} {
		var env struct{ Attributes []json.RawMessage }
		if err := json.Unmarshal(doc, &env); err != nil {
			t.Fatal(err)
		}
		rows[k] = len(env.Attributes)
	}
	fmt.Fprintf(&b, "\nAttributes: %d rows, %d in the input\n", rows[1], rows[0])
	return b.Bytes()
}

// copyDiff writes a line for each object copy of a that b lacks (-), then
// for each copy of b that a lacks (+) or whose "destroyed" flag differs
// (!), in document order, by id and the copy's rank among the copies of
// its id, with its JSON path.
func copyDiff(w io.Writer, a, b *snapshot.Tree) {
	copies := func(t *snapshot.Tree) (map[string]int32, []int32) {
		byKey, rank := map[string]int32{}, map[string]int{}
		var order []int32
		for k := range t.Objects {
			if t.Objects[k].HasID() {
				order = append(order, int32(k))
			}
		}
		sort.Slice(order, func(x, y int) bool { return t.Objects[order[x]].Start < t.Objects[order[y]].Start })
		for _, i := range order {
			id := t.ID(i)
			byKey[fmt.Sprintf("%s#%d", id, rank[id])] = i
			rank[id]++
		}
		return byKey, order
	}
	keyOf := func(byKey map[string]int32) map[int32]string {
		out := make(map[int32]string, len(byKey))
		for k, i := range byKey {
			out[i] = k
		}
		return out
	}
	aKeys, aOrder := copies(a)
	bKeys, bOrder := copies(b)
	aOf, bOf := keyOf(aKeys), keyOf(bKeys)
	n := 0
	flag := func(t *snapshot.Tree, i int32) string {
		if t.Objects[i].Destroyed() {
			return " (destroyed)"
		}
		return ""
	}
	for _, i := range aOrder {
		if _, ok := bKeys[aOf[i]]; !ok {
			fmt.Fprintf(w, "- %s at %s%s\n", a.ID(i), a.ObjectPath(i), flag(a, i))
			n++
		}
	}
	for _, i := range bOrder {
		j, ok := aKeys[bOf[i]]
		switch {
		case !ok:
			fmt.Fprintf(w, "+ %s at %s%s\n", b.ID(i), b.ObjectPath(i), flag(b, i))
			n++
		case a.Objects[j].Destroyed() != b.Objects[i].Destroyed():
			fmt.Fprintf(w, "! %s at %s: destroyed %v, was %v\n", b.ID(i), b.ObjectPath(i), b.Objects[i].Destroyed(), a.Objects[j].Destroyed())
			n++
		}
	}
	if n == 0 {
		fmt.Fprintln(w, "  (no copy added or removed)")
	}
}

// TestWriteBackSameOutput checks, on every real model and on generated
// ones, that the write-back writes the bytes it wrote when it built its
// values whole in memory.
func TestWriteBackSameOutput(t *testing.T) {
	models := wbModels(t)
	for k, v := range generatedModels(t) {
		models[k] = v
	}
	cases := wbCases(t, models)
	const defaultProxyMin = 1 << 20
	if proxyMin != defaultProxyMin {
		t.Fatalf("proxyMin is %d", proxyMin)
	}
	defer func() { proxyMin = defaultProxyMin }()
	var shapes struct{ retained, patched, dropped, expanded int }
	seen := map[string]bool{}
	for _, c := range cases {
		var b bytes.Buffer
		err := WriteBack(&b, c.p, c.out, c.attrs, c.keep)
		// Every patched subscriber written as a proxy: the same bytes.
		proxyMin = 0
		var viaProxy bytes.Buffer
		perr := WriteBack(&viaProxy, c.p, c.out, c.attrs, c.keep)
		proxyMin = defaultProxyMin
		if (err == nil) != (perr == nil) || err != nil && err.Error() != perr.Error() || !bytes.Equal(b.Bytes(), viaProxy.Bytes()) {
			t.Errorf("%s: through proxies: error %v (%v without), %d bytes (%d without)", c.name, perr, err, viaProxy.Len(), b.Len())
		}
		if err == nil {
			if !json.Valid(b.Bytes()) {
				t.Errorf("%s: output is not valid JSON", c.name)
			}
			for k, d := range c.out.Destroyed {
				if !d {
					shapes.retained++
					break
				} else if k == len(c.out.Destroyed)-1 && len(c.p.Diff.Dangling) > 0 {
					shapes.expanded++
				}
			}
			if len(c.out.Patches) > 0 {
				shapes.patched++
			}
			if len(c.p.Diff.Dropped) > 0 {
				shapes.dropped++
			}
		}
		if seen[c.name] {
			t.Fatalf("two cases named %s", c.name)
		}
		seen[c.name] = true
		switch {
		case err != nil:
			golden.Check(t, wantPath(c.name, ".error"), []byte(err.Error()+"\n"))
		case strings.HasPrefix(c.name, "gen/"):
			golden.Check(t, wantPath(c.name, ".diff"), objectDiff(t, c.p.Diff.Incoming.Doc.Data, b.Bytes()))
		default:
			golden.Check(t, wantPath(c.name, ".json"), b.Bytes())
		}
	}
	// The cases must cover every edit the write-back makes.
	if shapes.retained == 0 || shapes.patched == 0 || shapes.dropped == 0 || shapes.expanded == 0 {
		t.Fatalf("cases miss a shape: %+v", shapes)
	}
	// A golden file of no case is left over.
	want := filepath.Join("testdata", "want")
	err := filepath.WalkDir(want, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(want, path)
		if name := strings.TrimSuffix(filepath.ToSlash(rel), filepath.Ext(rel)); !seen[name] {
			t.Errorf("%s is the output of no case: remove it", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cases: %+v", len(cases), shapes)
}

// BenchmarkWriteBackMemory writes back a generated 200,000-object model
// (an envelope of 76 MB) to io.Discard, with 200 dangling references to
// removed applications kept (--on-dangling=keep: their objects written in
// full), and handler patches on two objects below the root. Metrics:
// alloc/input, the bytes allocated while deciding and writing the model,
// and peak-rss/input, the growth of the process's peak RSS (VmHWM, reset
// through /proc/self/clear_refs) over the same, each divided by the
// model's size: what the write-back costs beside the model and its plan.
// "destroyed" has every doomed object destroyed; "failed" has every
// seventh one failed and what must come after it blocked
// (failedAndBlocked), so that ObjectsCopy puts them back; "root-patched"
// is "destroyed" with a patch to the root object too.
func BenchmarkWriteBackMemory(b *testing.B) {
	var snapBuf, inBuf bytes.Buffer
	if _, err := modelgen.Generate(&snapBuf, &inBuf, modelgen.Config{Objects: 200_000, RemoveApps: 0.1, Seed: 1, Indent: true, DanglingRefs: 200}); err != nil {
		b.Fatal(err)
	}
	env := []byte(`{"Objects": ` + inBuf.String() + `, "ObjectsCopy": ` + snapBuf.String() + `, "Attributes": []}`)
	snapBuf, inBuf = bytes.Buffer{}, bytes.Buffer{}
	snap, in, err := snapshot.LoadModel(snapshot.NewDocument("bench.json", env))
	if err != nil {
		b.Fatal(err)
	}
	p := order.NewPlan(plantest.Compare(snap, in))
	patches := map[string][]json.RawMessage{}
	for id, list := range patchesFor(p) {
		if k, _ := in.Lookup(id); int(in.Objects[k].Start) != in.Start {
			patches[id] = list
		}
	}
	all := make([]bool, len(p.Objects))
	for i := range all {
		all[i] = true
	}
	for _, tc := range []struct {
		name      string
		destroyed []bool
		patches   map[string][]json.RawMessage
	}{{"destroyed", all, patches}, {"failed", failedAndBlocked(p), patches}, {"root-patched", all, patchesFor(p)}} {
		b.Run(tc.name, func(b *testing.B) {
			out := Effects{Destroyed: tc.destroyed, Patches: tc.patches}
			b.SetBytes(int64(len(env)))
			var ms0, ms1 runtime.MemStats
			var alloc uint64
			peak := int64(0)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				runtime.GC()
				debug.FreeOSMemory()
				reset := peakrss.Reset()
				base := peakrss.Status("VmRSS")
				runtime.ReadMemStats(&ms0)
				b.StartTimer()
				bw := bufio.NewWriterSize(io.Discard, 1<<20)
				if err := WriteBack(bw, p, out, nil, true); err != nil {
					b.Fatal(err)
				}
				if err := bw.Flush(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				runtime.ReadMemStats(&ms1)
				alloc += ms1.TotalAlloc - ms0.TotalAlloc
				if reset {
					peak = max(peak, peakrss.Status("VmHWM")-base)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(alloc)/float64(b.N)/float64(len(env)), "alloc/input")
			b.ReportMetric(float64(peak)/float64(len(env)), "peak-rss/input")
			b.ReportMetric(float64(len(env))/(1<<20), "input-MiB")
		})
	}
}

// failedAndBlocked returns a Destroyed vector of a run in which every
// seventh doomed object failed and blocked what must come after it (its
// owner chain, its subscribers, transitively), as apply blocks them.
func failedAndBlocked(p *order.Plan) []bool {
	out := make([]bool, len(p.Objects))
	for i := range out {
		out[i] = true
	}
	for i := range out {
		if i%7 != 0 || !out[i] {
			continue
		}
		queue := []int{i}
		for len(queue) > 0 {
			k := queue[0]
			queue = queue[1:]
			if out[k] {
				out[k] = false
				queue = append(queue, p.Successors(k)...)
			}
		}
	}
	return out
}

// TestObjectsCopyStreamed checks that ObjectsCopy is streamed from the
// incoming model for runs whose failed objects block their owners, as
// apply's are, patches and dropped objects included, and that it writes
// what the placement in the built Objects (objectsCopy) writes.
func TestObjectsCopyStreamed(t *testing.T) {
	models := wbModels(t)
	for k, v := range generatedModels(t) {
		models[k] = v
	}
	n := 0
	for _, c := range wbCases(t, models) {
		if !strings.HasSuffix(c.name, "/half-failed") {
			continue
		}
		destroyed := failedAndBlocked(c.p)
		if !slices.Contains(destroyed, false) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			wb := newWriteBack(c.p, destroyed)
			objects, err := wb.objects(c.out.Patches)
			if err != nil {
				t.Fatal(err)
			}
			streamed, err := wb.objectsCopyStreamed()
			if err != nil {
				t.Fatalf("not streamed: %v", err)
			}
			var built, got, want bytes.Buffer
			if err := objects(&built); err != nil {
				t.Fatal(err)
			}
			if err := streamed(&got); err != nil {
				t.Fatal(err)
			}
			placed, err := wb.objectsCopy(built.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if err := placed(&want); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("streamed ObjectsCopy differs:\n%s\nwant\n%s", got.Bytes(), want.Bytes())
			}
			if bytes.Equal(got.Bytes(), built.Bytes()) {
				t.Errorf("ObjectsCopy is Objects: the failed objects are not in it")
			}
		})
		n++
	}
	if n < 20 {
		t.Fatalf("only %d cases with failed objects", n)
	}
}

// TestWriteToChecksValues: a value that is not valid JSON is an error of
// WriteTo (the atomic write then leaves the target as it was), naming the
// value.
func TestWriteToChecksValues(t *testing.T) {
	value := func(s string) func(jsonedit.Writer) error {
		return func(w jsonedit.Writer) error { _, err := w.WriteString(s); return err }
	}
	for _, tc := range []struct {
		objects, objectsCopy, attrs string
		want                        string
	}{
		{`{"a": [1, 2]}`, `{"a": [1, 2]}`, `[]`, ""},
		{`{"a": [1, 2}`, `{}`, `[]`, "the Objects value written is not valid JSON"},
		{`{}`, `{"a": 1} {}`, `[]`, "the ObjectsCopy value written is not valid JSON"},
		{`{}`, `{}`, `[1,]`, "the Attributes value written is not valid JSON"},
	} {
		m := &Model{objects: value(tc.objects), objectsCopy: value(tc.objectsCopy), attributes: value(tc.attrs)}
		var b bytes.Buffer
		_, err := m.WriteTo(&b)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.objects, err)
		case tc.want == "" && !json.Valid(b.Bytes()):
			t.Errorf("envelope not valid: %s", b.Bytes())
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}
