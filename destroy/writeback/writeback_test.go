package writeback

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/internal/golden"
	"github.com/objgc/objgc/internal/plantest"
	"github.com/objgc/objgc/snapshot"
)

// Ids in testdata/pairs.
const (
	idMySQL         = "769af50c-9629-4694-b623-e9b392941279"
	idMySQLInstance = "76b9ca88-c668-4e37-a830-5845adc10b0e"
	idPetClinic     = "fda74653-8b66-42e2-be16-12ebc87d7570"
	idRegionsEnv    = "f7f22c174070455c9cafc59391402bdc"
	idRegionTwo     = "f8cb28d147914850978edb35eca156e1"
	idRegionTwoNet  = "72d2c13c600247c98e09e2e3c1cd9d70"
)

func readPair(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pairs", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func planData(t *testing.T, name string, data []byte) *order.Plan {
	t.Helper()
	snap, in, err := snapshot.LoadModel(snapshot.NewDocument(name, data))
	if err != nil {
		t.Fatal(err)
	}
	return order.NewPlan(plantest.Compare(snap, in))
}

// pairNames lists testdata/pairs/*.json.
func pairNames(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("..", "..", "testdata", "pairs", "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no pairs: %v", err)
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	return names
}

// destroyedExcept returns a Destroyed vector with every object destroyed
// but those with the given ids.
func destroyedExcept(p *order.Plan, ids ...string) []bool {
	out := make([]bool, len(p.Objects))
	for i := range p.Objects {
		out[i] = !slices.Contains(ids, p.ID(i))
	}
	return out
}

// writeBackOK runs WriteBack and checks what every output must satisfy: it
// is valid JSON, loads as a model, and is the envelope of Build.
func writeBackOK(t *testing.T, p *order.Plan, out Effects, attrs json.RawMessage, keep bool) (env []byte, snap, in *snapshot.Tree) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteBack(&b, p, out, attrs, keep); err != nil {
		t.Fatalf("WriteBack: %v", err)
	}
	env = b.Bytes()
	if !json.Valid(env) {
		t.Fatalf("output is not valid JSON:\n%s", env)
	}
	snap, in, err := snapshot.LoadModel(snapshot.NewDocument("out.json", env))
	if err != nil {
		t.Fatalf("output does not load: %v\n%s", err, env)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(env, &fields); err != nil || len(fields) != 3 || fields["Attributes"] == nil {
		t.Fatalf("output is not an envelope of three keys: %v %v", err, fields)
	}
	return env, snap, in
}

// checkGolden compares got with testdata/name (go test -update rewrites it).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

func span(t *snapshot.Tree) []byte { return t.Doc.Data[t.Start:t.End] }

func objectBytes(t *snapshot.Tree, id string) []byte {
	i, ok := t.Lookup(id)
	if !ok {
		return nil
	}
	return t.Doc.Data[t.Objects[i].Start:t.Objects[i].End]
}

// doomedIDs returns the ids a plan of snap against in would destroy.
func doomedIDs(snap, in *snapshot.Tree) []string {
	d := plantest.Compare(snap, in)
	var ids []string
	for _, i := range d.Doomed {
		ids = append(ids, snap.ID(i))
	}
	sort.Strings(ids)
	return ids
}

func TestWriteBackAllDestroyed(t *testing.T) {
	for _, name := range pairNames(t) {
		t.Run(name, func(t *testing.T) {
			data := readPair(t, name)
			p := planData(t, name, data)
			keep := len(p.Diff.Dangling) > 0
			env, snap, in := writeBackOK(t, p, Effects{Destroyed: destroyedExcept(p)}, nil, keep)
			if !bytes.Equal(span(snap), span(in)) {
				t.Errorf("ObjectsCopy differs from Objects")
			}
			if keep {
				return // TestWriteBackDanglingKeep
			}
			if inc := p.Diff.Incoming; !bytes.Equal(span(in), span(inc)) {
				t.Errorf("Objects differs from the incoming model:\n%s", span(in))
			}
			want := EnvelopeOf(span(p.Diff.Incoming), span(p.Diff.Incoming), []byte("[]"))
			if !bytes.Equal(env, want) {
				t.Errorf("envelope:\n%s\nwant\n%s", env, want)
			}
			if ids := doomedIDs(snap, in); len(ids) != 0 {
				t.Errorf("doomed again: %v", ids)
			}
		})
	}
}

func TestWriteBackDanglingKeep(t *testing.T) {
	data := readPair(t, "dangling-reference.json")
	// A later reference, in PetClinic after the first one.
	war := `"warLocation": "https://dl.dropboxusercontent.com/u/1684617/petclinic.war"`
	data = []byte(strings.Replace(string(data), war, war+`,
        "replica": "`+idMySQL+`"`, 1))
	p := planData(t, "dangling.json", data)
	if len(p.Diff.Dangling) != 2 {
		t.Fatalf("dangling references: %+v", p.Diff.Dangling)
	}
	if err := WriteBack(new(bytes.Buffer), p, Effects{Destroyed: destroyedExcept(p)}, nil, false); err == nil ||
		!strings.Contains(err.Error(), idMySQL) || !strings.Contains(err.Error(), "on-dangling=keep") {
		t.Errorf("without keep: err = %v, want one naming %s and --on-dangling=keep", err, idMySQL)
	}
	env, snap, in := writeBackOK(t, p, Effects{Destroyed: destroyedExcept(p)}, nil, true)
	checkGolden(t, "dangling-reference-keep.json", env)
	for _, tr := range []*snapshot.Tree{in, snap} {
		i, ok := tr.Lookup(idMySQL)
		if !ok {
			t.Fatalf("%s: MySql missing", tr.Path)
		}
		if got, want := tr.ObjectPath(i), tr.Path+".services[1].database"; got != want {
			t.Errorf("MySql written at %s, want %s", got, want)
		}
		for _, id := range []string{idMySQL, idMySQLInstance} {
			j, _ := tr.Lookup(id)
			if !tr.Objects[j].Destroyed() {
				t.Errorf("%s in %s not flagged destroyed", id, tr.Path)
			}
		}
		if n := bytes.Count(span(tr), []byte(`"id": "`+idMySQL+`"`)); n != 1 {
			t.Errorf("MySql written %d times in %s", n, tr.Path)
		}
	}
	var model struct {
		Objects struct {
			Services []map[string]any `json:"services"`
		}
	}
	if err := json.Unmarshal(env, &model); err != nil {
		t.Fatal(err)
	}
	if got := model.Objects.Services[1]["replica"]; got != idMySQL {
		t.Errorf("later reference = %v, want the bare id", got)
	}
	// The snapshot copy, flagged: only the header gained a line.
	want := bytes.Replace(objectBytes(p.Diff.Snapshot, idMySQL), []byte(`"?": {`), []byte(`"?": {
          "destroyed": true,`), 1)
	want = bytes.Replace(want, []byte(`"?": {
            "id": "`+idMySQLInstance), []byte(`"?": {
            "destroyed": true,
            "id": "`+idMySQLInstance), 1)
	if got := objectBytes(in, idMySQL); !bytes.Equal(got, want) {
		t.Errorf("MySql written as\n%s\nwant\n%s", got, want)
	}
	if ids := doomedIDs(snap, in); len(ids) != 0 {
		t.Errorf("doomed again: %v", ids)
	}
}

func TestWriteBackFailedAndBlocked(t *testing.T) {
	data := readPair(t, "app-removed.json")
	p := planData(t, "app-removed.json", data)
	// The instance's destroy hook failed; MySql, its owner, is blocked.
	out := Effects{Destroyed: destroyedExcept(p, idMySQLInstance, idMySQL)}
	env, snap, in := writeBackOK(t, p, out, nil, false)
	checkGolden(t, "app-removed-failed.json", env)
	if !bytes.Equal(span(in), span(p.Diff.Incoming)) {
		t.Errorf("Objects differs from the incoming model:\n%s", span(in))
	}
	i, ok := snap.Lookup(idMySQL)
	if !ok {
		t.Fatal("MySql is not in ObjectsCopy")
	}
	if got := snap.ObjectPath(i); got != "$.ObjectsCopy.services[1]" {
		t.Errorf("MySql at %s, want appended to $.ObjectsCopy.services", got)
	}
	if got, want := objectBytes(snap, idMySQL), objectBytes(p.Diff.Snapshot, idMySQL); !bytes.Equal(got, want) {
		t.Errorf("MySql in ObjectsCopy is not its snapshot copy:\n%s", got)
	}
	if _, ok := snap.Lookup(idPetClinic); ok {
		t.Error("destroyed PetClinic is in ObjectsCopy")
	}
	if got, want := doomedIDs(snap, in), []string{idMySQL, idMySQLInstance}; !reflect.DeepEqual(got, want) {
		t.Errorf("doomed again: %v, want %v", got, want)
	}
	// Only the instance failed (PetClinic does not depend on MySql): MySql
	// is destroyed, the instance is put back in it... which is gone, so
	// it goes to the environment's retained array.
	out = Effects{Destroyed: destroyedExcept(p, idMySQLInstance)}
	env, snap, in = writeBackOK(t, p, out, nil, false)
	checkGolden(t, "app-removed-orphan.json", env)
	j, ok := snap.Lookup(idMySQLInstance)
	if !ok || snap.ObjectPath(j) != "$.ObjectsCopy."+retainedKey+"[0]" {
		t.Errorf("instance not retained under the root: %v", ok)
	}
	if got, want := doomedIDs(snap, in), []string{idMySQLInstance}; !reflect.DeepEqual(got, want) {
		t.Errorf("doomed again: %v, want %v", got, want)
	}
}

func TestWriteBackBlockedInsideKeptDestroyed(t *testing.T) {
	// MySql destroyed and kept (referenced); its instance failed: Objects
	// holds MySql without the instance, ObjectsCopy puts it back in it.
	data := readPair(t, "dangling-reference.json")
	p := planData(t, "dangling-reference.json", data)
	env, snap, in := writeBackOK(t, p, Effects{Destroyed: destroyedExcept(p, idMySQLInstance)}, nil, true)
	checkGolden(t, "dangling-reference-instance-failed.json", env)
	if _, ok := in.Lookup(idMySQLInstance); ok {
		t.Error("the failed instance is in Objects")
	}
	j, ok := snap.Lookup(idMySQLInstance)
	if !ok || snap.ObjectPath(j) != "$.ObjectsCopy.services[1].database.instance" || snap.Objects[j].Destroyed() {
		t.Errorf("instance not back in its place in MySql: %v", ok)
	}
	if got, want := doomedIDs(snap, in), []string{idMySQLInstance}; !reflect.DeepEqual(got, want) {
		t.Errorf("doomed again: %v, want %v", got, want)
	}
}

func TestWriteBackEnvironmentDeletedFailed(t *testing.T) {
	data := readPair(t, "environment-deleted.json")
	p := planData(t, "environment-deleted.json", data)
	root := p.Diff.Snapshot.ID(int32(len(p.Diff.Snapshot.Objects) - 1))
	_, snap, in := writeBackOK(t, p, Effects{Destroyed: destroyedExcept(p, root)}, nil, false)
	if !in.Null {
		t.Error("Objects is not null")
	}
	if got, want := doomedIDs(snap, in), []string{root}; !reflect.DeepEqual(got, want) {
		t.Errorf("doomed again: %v, want %v", got, want)
	}
}

func TestWriteBackPatch(t *testing.T) {
	data := readPair(t, "region-removed-handlers.json")
	p := planData(t, "region-removed-handlers.json", data)
	patch := json.RawMessage(`{"name": "x", "regionName": null}`)
	out := Effects{Destroyed: destroyedExcept(p), Patches: map[string][]json.RawMessage{
		idRegionsEnv: {patch},
		idRegionTwo:  {json.RawMessage(`{"name": "doomed"}`)}, // doomed: not applied
	}}
	_, snap, in := writeBackOK(t, p, out, nil, false)
	incoming := span(p.Diff.Incoming)
	want := bytes.Replace(incoming, []byte(`"name": "new_env",`), []byte(`"name": "x",`), 1)
	if bytes.Equal(want, incoming) {
		t.Fatal("test data changed")
	}
	if !bytes.Equal(span(in), want) {
		t.Errorf("Objects:\n%s\nwant only the name changed:\n%s", span(in), want)
	}
	if !bytes.Equal(span(snap), span(in)) {
		t.Error("ObjectsCopy differs from Objects")
	}
	// The patch holds no array, where the library alone departs from
	// RFC 7386 (see internal/jsonedit's oracleMergePatch).
	merged, err := jsonpatch.MergePatch(objectBytes(p.Diff.Incoming, idRegionsEnv), patch)
	if err != nil {
		t.Fatal(err)
	}
	assertSameJSON(t, objectBytes(in, idRegionsEnv), merged)

	for _, bad := range []string{`{"?": {"id": "x"}}`, `{"defaultNetworks": {"environment": {"?": null}}}`, `"x"`, `null`, `{`} {
		out := Effects{Destroyed: destroyedExcept(p), Patches: map[string][]json.RawMessage{idRegionsEnv: {json.RawMessage(bad)}}}
		err := WriteBack(new(bytes.Buffer), p, out, nil, false)
		if err == nil || !strings.Contains(err.Error(), idRegionsEnv) {
			t.Errorf("patch %s: err = %v, want an error naming the subscriber", bad, err)
		}
	}
	out.Patches = map[string][]json.RawMessage{"no-such-object": {patch}}
	if err := WriteBack(new(bytes.Buffer), p, out, nil, false); err == nil || !strings.Contains(err.Error(), "no-such-object") {
		t.Errorf("unknown subscriber: err = %v", err)
	}
}

func TestWriteBackPatchReReferences(t *testing.T) {
	data := readPair(t, "region-removed-handlers.json")
	p := planData(t, "region-removed-handlers.json", data)
	out := Effects{Destroyed: destroyedExcept(p), Patches: map[string][]json.RawMessage{
		idRegionsEnv: {json.RawMessage(`{"lostRegion": "` + idRegionTwo + `"}`), json.RawMessage(`{"alsoLost": ["` + idRegionTwo + `"]}`)},
	}}
	env, snap, in := writeBackOK(t, p, out, nil, false)
	checkGolden(t, "region-removed-rereference.json", env)
	for _, tr := range []*snapshot.Tree{in, snap} {
		i, ok := tr.Lookup(idRegionTwo)
		if !ok || tr.ObjectPath(i) != tr.Path+".lostRegion" || !tr.Objects[i].Destroyed() {
			t.Fatalf("%s: RegionTwo not written flagged at lostRegion", tr.Path)
		}
		j, ok := tr.Lookup(idRegionTwoNet)
		if !ok || !tr.Objects[j].Destroyed() {
			t.Errorf("%s: RegionTwo's network not flagged destroyed", tr.Path)
		}
	}
	var model struct{ Objects map[string]any }
	if err := json.Unmarshal(env, &model); err != nil {
		t.Fatal(err)
	}
	if got := model.Objects["alsoLost"]; !reflect.DeepEqual(got, []any{idRegionTwo}) {
		t.Errorf("later reference: %v", got)
	}
	if ids := doomedIDs(snap, in); len(ids) != 0 {
		t.Errorf("doomed again: %v", ids)
	}
}

func TestWriteBackAttributes(t *testing.T) {
	data := readPair(t, "app-removed.json")
	p := planData(t, "app-removed.json", data)
	attrs := json.RawMessage(`[
    ["` + idMySQL + `", "instanceCreated", true],
    ["ad9762b2d82f44ca8b8a6ce4a19dd1cc", "deployed", 1],
    ["` + idPetClinic + `", "x", null],
    ["` + idMySQLInstance + `", "y", "z"]
  ]`)
	out := Effects{Destroyed: destroyedExcept(p, idMySQLInstance, idMySQL)}
	env, _, _ := writeBackOK(t, p, out, attrs, false)
	var got struct{ Attributes json.RawMessage }
	if err := json.Unmarshal(env, &got); err != nil {
		t.Fatal(err)
	}
	want := `[
    ["` + idMySQL + `", "instanceCreated", true],
    ["ad9762b2d82f44ca8b8a6ce4a19dd1cc", "deployed", 1],
    ["` + idMySQLInstance + `", "y", "z"]
  ]`
	if string(got.Attributes) != want {
		t.Errorf("Attributes:\n%s\nwant\n%s", got.Attributes, want)
	}
	for _, in := range []json.RawMessage{nil, json.RawMessage("null")} {
		env, _, _ := writeBackOK(t, p, out, in, false)
		if !bytes.HasSuffix(env, []byte(`"Attributes": []`+"\n}\n")) {
			t.Errorf("Attributes %q: got %s", in, env[len(env)-40:])
		}
	}
	if err := WriteBack(new(bytes.Buffer), p, out, json.RawMessage(`{"a": 1}`), false); err == nil {
		t.Error("Attributes as an object: no error")
	}
}

func TestWriteBackDropped(t *testing.T) {
	// MySql, written destroyed by an earlier run, and another destroyed
	// object sit outside the environment; nothing holds them any more.
	pair := readPair(t, "dangling-reference.json")
	p := planData(t, "dangling-reference.json", pair)
	flagged := strings.ReplaceAll(string(objectBytes(p.Diff.Snapshot, idMySQL)), `"?": {`, `"?": {"destroyed": true,`)
	env := strings.Replace(string(span(p.Diff.Incoming)), `"database": "`+idMySQL+`",`, `"database": "",`, 1)
	objects := `{"old": ` + flagged + `, "env": ` + env + `, "more": [1, {"?": {"id": "gone-2", "destroyed": true}}, 2]}`
	next := `{"Objects": ` + objects + `, "ObjectsCopy": ` + objects + `, "Attributes": []}`
	p2 := planData(t, "next.json", []byte(next))
	if len(p2.Diff.Dropped) != 3 || len(p2.Objects) != 0 {
		t.Fatalf("dropped %v, doomed %d; want MySql, its instance and gone-2 dropped", p2.Diff.Dropped, len(p2.Objects))
	}
	attrs := `[["` + idMySQL + `", "a", 1], ["x"], ["gone-2", "b", 2]]`
	out, snap, in := writeBackOK(t, p2, Effects{}, json.RawMessage(attrs), false)
	checkGolden(t, "dropped.json", out)
	if want := `{"env": ` + env + `, "more": [1, 2]}`; string(span(in)) != want {
		t.Errorf("Objects:\n%s\nwant\n%s", span(in), want)
	}
	if !bytes.Equal(span(snap), span(in)) {
		t.Error("ObjectsCopy differs from Objects")
	}
	if !bytes.HasSuffix(out, []byte(`"Attributes": [["x"]]`+"\n}\n")) {
		t.Errorf("attributes of the dropped objects kept: %s", out)
	}
}

func assertSameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%v: %s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestApplyPatch(t *testing.T) {
	tests := []struct {
		target, patch, want string
	}{
		{`{"a": 1, "b": 2}`, `{"a": 3}`, `{"a": 3, "b": 2}`},
		{`{"a": 1, "b": 2}`, `{"a": null}`, `{"b": 2}`},
		{`{"a": 1, "b": 2}`, `{"b": null}`, `{"a": 1}`},
		{`{"a": 1}`, `{"a": null}`, `{}`},
		{`{"a": 1}`, `{"c": {"d": null, "e": [null]}}`, `{"a": 1, "c": {"e":[null]}}`},
		{`{"a":1,"b":2}`, `{"a":null,"c":3}`, `{"b":2,"c":3}`},
		{"{\n  \"a\": 1,\n  \"b\": {\n    \"c\": 2\n  }\n}", `{"b": {"c": null, "d": {"e": 1}}}`, "{\n  \"a\": 1,\n  \"b\": {\n    \"d\": {\n      \"e\": 1\n    }\n  }\n}"},
		{"{\n  \"a\": 1\n}", `{"n": [1, {"x": null}]}`, "{\n  \"a\": 1,\n  \"n\": [\n    1,\n    {\n      \"x\": null\n    }\n  ]\n}"},
		{`{"a": {"b": 1}}`, `{"a": "s"}`, `{"a": "s"}`},
		{`{"a": "s"}`, `{"a": {"b": 1, "c": null}}`, `{"a": {"b":1}}`},
		{`{}`, `{"a": 1, "b": 2}`, `{"a": 1, "b": 2}`},
		{`{ }`, `{"a": 1}`, `{"a": 1}`},
		{"{\n  \"a\": 1,\n  \"b\": 2\n}", `{"a": null, "b": null, "c": true}`, "{\n  \"c\": true\n}"},
		{`{"a.b": 1, "k\"q": 2}`, `{"a.b": null, "k\"q": 3, "*": 4}`, `{"k\"q": 3, "*": 4}`},
		{`{"a": 1, "a": 2}`, `{"a": 3}`, `{"a": 3, "a": 3}`},
		{`{"a": 1}`, `{}`, `{"a": 1}`},
		{`{"x": {"?": {"id": "1"}, "p": 1}}`, `{"x": {"p": 2}}`, `{"x": {"?": {"id": "1"}, "p": 2}}`},
	}
	for _, tt := range tests {
		got, err := applyPatch([]byte(tt.target), []byte(tt.patch))
		if err != nil {
			t.Errorf("%s + %s: %v", tt.target, tt.patch, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s + %s =\n%s\nwant\n%s", tt.target, tt.patch, got, tt.want)
		}
	}
	for _, bad := range []string{`{"?": 1}`, `{"x": {"?": null}}`, `[1]`, `1`} {
		if _, err := applyPatch([]byte(`{"x": {"?": {"id": "1"}}}`), []byte(bad)); err == nil {
			t.Errorf("patch %s: no error", bad)
		}
	}
}

func TestFlagHeader(t *testing.T) {
	tests := []struct{ header, want string }{
		{`{}`, `{"destroyed": true}`},
		{`{"id": "x"}`, `{"destroyed": true, "id": "x"}`},
		{`{"id":"x"}`, `{"destroyed":true,"id":"x"}`},
		{"{\n  \"id\": \"x\"\n}", "{\n  \"destroyed\": true,\n  \"id\": \"x\"\n}"},
		{`{"id": "x", "destroyed": false}`, `{"id": "x", "destroyed": true}`},
		{`{"destroyed": true, "id": "x"}`, `{"destroyed": true, "id": "x"}`},
		{`{"destroyed" : null}`, `{"destroyed" : true}`},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := flagHeader(&b, []byte(tt.header), 0); err != nil || b.String() != tt.want {
			t.Errorf("flagHeader(%s) = %s, %v; want %s", tt.header, b.String(), err, tt.want)
		}
	}
}

// TestWriteBackRandomOutcomes checks, for random Destroyed vectors on every
// real pair, that nothing that still exists is missing from ObjectsCopy,
// that nothing destroyed appears without "destroyed": true, and that the
// next run dooms exactly the objects not destroyed.
func TestWriteBackRandomOutcomes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, name := range pairNames(t) {
		data := readPair(t, name)
		p := planData(t, name, data)
		keep := len(p.Diff.Dangling) > 0
		runs := 1 << len(p.Objects)
		if runs > 64 {
			runs = 64
		}
		for run := 0; run < runs; run++ {
			out := Effects{Destroyed: make([]bool, len(p.Objects))}
			for i := range out.Destroyed {
				if len(p.Objects) <= 6 {
					out.Destroyed[i] = run&(1<<i) != 0 // every vector
				} else {
					out.Destroyed[i] = rng.IntN(2) == 0
				}
			}
			t.Run(fmt.Sprintf("%s/%v", name, out.Destroyed), func(t *testing.T) {
				checkOutcome(t, p, out, keep)
			})
		}
	}
}

func checkOutcome(t *testing.T, p *order.Plan, out Effects, keep bool) {
	_, snap, in := writeBackOK(t, p, out, nil, keep)
	inc := p.Diff.Incoming
	var retained []string
	for k := range p.Objects {
		if !out.Destroyed[k] {
			retained = append(retained, p.ID(k))
		}
	}
	sort.Strings(retained)
	// Everything of the incoming model that is not destroyed is in both.
	for i := range inc.Objects {
		o, id := &inc.Objects[i], inc.ID(int32(i))
		if o.HasID() && !inc.Objects[inc.First(int32(i))].Destroyed() {
			for _, tr := range []*snapshot.Tree{in, snap} {
				if j, ok := tr.Lookup(id); !ok || tr.Objects[j].Destroyed() {
					t.Errorf("live object %s missing from %s", id, tr.Path)
				}
			}
		}
	}
	for k := range p.Objects {
		o := p.Object(k)
		if !out.Destroyed[k] {
			if j, ok := snap.Lookup(o.ID); !ok || snap.Objects[j].Destroyed() {
				t.Errorf("object %s not destroyed is missing from ObjectsCopy", o.ID)
			}
			if _, ok := in.Lookup(o.ID); ok {
				t.Errorf("object %s not destroyed is in Objects", o.ID)
			}
			continue
		}
		for _, tr := range []*snapshot.Tree{in, snap} {
			for c := range tr.Objects {
				if oc := &tr.Objects[c]; oc.HasID() && tr.ID(int32(c)) == o.ID && !oc.Destroyed() {
					t.Errorf("destroyed object %s at %s without \"destroyed\": true", o.ID, tr.ObjectPath(int32(c)))
				}
			}
		}
	}
	if got := doomedIDs(snap, in); !reflect.DeepEqual(got, retained) && !(len(got) == 0 && len(retained) == 0) {
		t.Errorf("doomed again: %v, want %v", got, retained)
	}
	// Objects is the incoming model when no destroyed object is kept.
	if !keep && !bytes.Equal(span(in), span(inc)) && !inc.Null {
		t.Errorf("Objects changed")
	}
}

func TestWriteBackPlaces(t *testing.T) {
	const snap = `{"?": {"id": "root"}, "apps": [{"?": {"id": "a"}, "slot": {"?": {"id": "b"}}}], "box": {"inner": {"?": {"id": "c"}}}, "named": {"?": {"id": "d"}}}`
	const a, b, c, d = `{"?": {"id": "a"}, "slot": {"?": {"id": "b"}}}`, `{"?": {"id": "b"}}`, `{"?": {"id": "c"}}`, `{"?": {"id": "d"}}`
	tests := []struct {
		name           string
		snap, in       string
		destroyed      []string
		wantObjects    string
		wantCopy       string
		wantNextDoomed []string
	}{
		{
			name: "places still there",
			snap: snap, in: `{"?": {"id": "root"}, "apps": [], "box": {}, "named": null}`,
			wantCopy:       `{"?": {"id": "root"}, "apps": [` + a + `], "box": {"inner": ` + c + `}, "named": ` + d + `}`,
			wantNextDoomed: []string{"a", "b", "c", "d"},
		},
		{
			name: "places gone",
			snap: snap, in: `{"?": {"id": "root"}, "apps": "gone", "named": "x"}`,
			wantCopy:       `{"?": {"id": "root"}, "apps": "gone", "named": "x", "objgcRetained": [` + a + `, ` + c + `, ` + d + `]}`,
			wantNextDoomed: []string{"a", "b", "c", "d"},
		},
		{
			name: "a retained array already there",
			snap: snap, in: `{"?": {"id": "root"}, "objgcRetained": [1], "apps": 5, "named": "d"}`,
			destroyed:      []string{"c"},
			wantCopy:       `{"?": {"id": "root"}, "objgcRetained": [1, ` + a + `], "apps": 5, "named": ` + d + `}`,
			wantNextDoomed: []string{"a", "b", "d"},
		},
		{
			name: "the owner destroyed",
			snap: snap, in: `{"?": {"id": "root"}, "apps": [{"?": {"id": "z"}}]}`,
			destroyed:      []string{"a", "c", "d"},
			wantCopy:       `{"?": {"id": "root"}, "apps": [{"?": {"id": "z"}}], "objgcRetained": [` + b + `]}`,
			wantNextDoomed: []string{"b"},
		},
		{
			name: "the environment deleted, its root destroyed",
			snap: snap, in: `null`,
			destroyed:      []string{"root", "c"},
			wantObjects:    `null`,
			wantCopy:       `{"objgcRetained": [` + a + `, ` + d + `]}`,
			wantNextDoomed: []string{"a", "b", "d"},
		},
		{
			name: "the environment deleted, its root failed",
			snap: snap, in: `null`,
			destroyed:      []string{"b", "c"},
			wantObjects:    `null`,
			wantCopy:       strings.Replace(strings.Replace(snap, `{"id": "b"}`, `{"destroyed": true, "id": "b"}`, 1), `{"id": "c"}`, `{"destroyed": true, "id": "c"}`, 1),
			wantNextDoomed: []string{"a", "d", "root"},
		},
		{
			name: "a top-level array",
			snap: `[{"?": {"id": "x"}}, {"?": {"id": "y"}}]`, in: `[{"?": {"id": "x"}}]`,
			wantCopy:       `[{"?": {"id": "x"}}, {"?": {"id": "y"}}]`,
			wantNextDoomed: []string{"y"},
		},
		{
			name: "a moved object inside a retained one",
			snap: snap, in: `{"?": {"id": "root"}, "apps": [], "moved": ` + b + `}`,
			destroyed:      []string{"c", "d"},
			wantCopy:       `{"?": {"id": "root"}, "apps": [{"?": {"id": "a"}, "slot": "b"}], "moved": ` + b + `}`,
			wantNextDoomed: []string{"a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plantest.Plan(t, tt.snap, tt.in)
			out := Effects{Destroyed: make([]bool, len(p.Objects))}
			for i := range p.Objects {
				out.Destroyed[i] = slices.Contains(tt.destroyed, p.ID(i))
			}
			keep := len(p.Diff.Dangling) > 0
			m, err := Build(p, out, nil, keep)
			if err != nil {
				t.Fatal(err)
			}
			wantObjects := tt.wantObjects
			if wantObjects == "" {
				wantObjects = tt.in
			}
			objects, objectsCopy, _ := m.Values()
			if string(objects) != wantObjects {
				t.Errorf("Objects:\n%s\nwant\n%s", objects, wantObjects)
			}
			if string(objectsCopy) != tt.wantCopy {
				t.Errorf("ObjectsCopy:\n%s\nwant\n%s", objectsCopy, tt.wantCopy)
			}
			snap, in, err := snapshot.LoadModel(snapshot.NewDocument("out.json", m.Envelope()))
			if err != nil {
				t.Fatal(err)
			}
			if got := doomedIDs(snap, in); !reflect.DeepEqual(got, tt.wantNextDoomed) {
				t.Errorf("doomed again: %v, want %v", got, tt.wantNextDoomed)
			}
			checkOutcome(t, p, out, keep)
		})
	}
}

func TestWriteBackBadOutcome(t *testing.T) {
	p := planData(t, "app-removed.json", readPair(t, "app-removed.json"))
	err := WriteBack(new(bytes.Buffer), p, Effects{Destroyed: []bool{true}}, nil, false)
	if err == nil || !strings.Contains(err.Error(), "1 destroyed flags for 3 doomed objects") {
		t.Errorf("err = %v", err)
	}
}
