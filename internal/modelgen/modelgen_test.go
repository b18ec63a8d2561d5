package modelgen

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// --- a tiny object-model walker, independent of the generator ---

type tObj struct {
	id, typ, owner string
	legacy         bool // type without version/package, classVersion+package in header
	subscribers    []string
	handlers       []any // string or nil
}

type tRef struct {
	referrer, path, value string
}

type tModel struct {
	objs  map[string]*tObj
	order []string
	strs  []tRef // every string property value, with its nearest enclosing object
}

var idRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

func parseModel(t *testing.T, data []byte) *tModel {
	t.Helper()
	if !json.Valid(data) {
		t.Fatalf("output is not valid JSON")
	}
	var root any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		t.Fatal(err)
	}
	m := &tModel{objs: map[string]*tObj{}}
	m.walk(t, root, "", "$")
	return m
}

func (m *tModel) walk(t *testing.T, v any, owner, path string) {
	switch v := v.(type) {
	case map[string]any:
		if hdr, ok := v["?"].(map[string]any); ok {
			id, _ := hdr["id"].(string)
			if !idRE.MatchString(id) {
				t.Fatalf("%s: bad id %q", path, id)
			}
			if _, dup := m.objs[id]; dup {
				t.Fatalf("%s: duplicate id %s", path, id)
			}
			o := &tObj{id: id, owner: owner}
			o.typ, _ = hdr["type"].(string)
			if _, ok := hdr["classVersion"]; ok {
				o.legacy = true
				if strings.ContainsAny(o.typ, "/@") || hdr["package"] == nil {
					t.Fatalf("%s: legacy header %v", path, hdr)
				}
			} else if !strings.Contains(o.typ, "/") || !strings.Contains(o.typ, "@") {
				t.Fatalf("%s: type %q is neither versioned nor legacy", path, o.typ)
			}
			if deps, ok := hdr["dependencies"].(map[string]any); ok {
				for _, r := range deps["onDestruction"].([]any) {
					rec := r.(map[string]any)
					o.subscribers = append(o.subscribers, rec["subscriber"].(string))
					o.handlers = append(o.handlers, rec["handler"])
				}
			}
			m.objs[id] = o
			m.order = append(m.order, id)
			owner = id
		}
		for k, x := range v {
			if k == "?" {
				continue
			}
			m.walk(t, x, owner, path+"."+k)
		}
	case []any:
		for i, x := range v {
			m.walk(t, x, owner, path+"["+itoa(i)+"]")
		}
	case string:
		m.strs = append(m.strs, tRef{owner, path, v})
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// refs returns the string property values that equal an id in ids.
func (m *tModel) refsTo(ids map[string]bool) []tRef {
	var out []tRef
	for _, r := range m.strs {
		if ids[r.value] {
			out = append(out, r)
		}
	}
	return out
}

func (m *tModel) idSet() map[string]bool {
	s := make(map[string]bool, len(m.objs))
	for id := range m.objs {
		s[id] = true
	}
	return s
}

// inside reports whether id is, or is owned (transitively) by, an id in set.
func (m *tModel) inside(id string, set map[string]bool) bool {
	for id != "" {
		if set[id] {
			return true
		}
		id = m.objs[id].owner
	}
	return false
}

// --- helpers ---

func gen(t testing.TB, cfg Config) (snap, inc []byte, st Stats) {
	t.Helper()
	var s, i bytes.Buffer
	st, err := Generate(&s, &i, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.SnapshotBytes != int64(s.Len()) || st.IncomingBytes != int64(i.Len()) {
		t.Fatalf("byte stats %d/%d, wrote %d/%d", st.SnapshotBytes, st.IncomingBytes, s.Len(), i.Len())
	}
	return s.Bytes(), i.Bytes(), st
}

// --- tests ---

func TestCountsAndValidity(t *testing.T) {
	t.Parallel()
	for _, objects := range []int{0, 6, 9, 10, 11, 13, 57, 1000, 4321} {
		for _, indent := range []bool{true, false} {
			cfg := Config{Objects: objects, RemoveApps: 0.25, Seed: uint64(objects), Indent: indent}
			snap, inc, st := gen(t, cfg)
			sm, im := parseModel(t, snap), parseModel(t, inc)
			if len(sm.objs) != st.SnapshotObjects || len(im.objs) != st.IncomingObjects {
				t.Fatalf("%d: walker found %d/%d objects, stats say %d/%d", objects, len(sm.objs), len(im.objs), st.SnapshotObjects, st.IncomingObjects)
			}
			want := max(objects, fixedObjects)
			if objects >= 10 && st.SnapshotObjects != want {
				t.Errorf("Objects=%d: snapshot has %d objects", objects, st.SnapshotObjects)
			}
			if d := st.SnapshotObjects - want; d < -minAppSize || d > 0 {
				t.Errorf("Objects=%d: snapshot has %d objects, outside tolerance", objects, st.SnapshotObjects)
			}
		}
	}
}

func TestIncomingIsSnapshotMinusRemovedApps(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{
		{Objects: 3000, RemoveApps: 0.3, Seed: 1, Indent: true},
		{Objects: 3000, RemoveApps: 0, Seed: 2},
		{Objects: 3000, RemoveApps: 1, Seed: 3},
		{Objects: 777, RemoveApps: 0.5, Seed: 4, DanglingRefs: 4},
	} {
		snap, inc, st := gen(t, cfg)
		sm, im := parseModel(t, snap), parseModel(t, inc)
		root := sm.order[0]
		apps, removed := 0, map[string]bool{}
		for _, id := range sm.order {
			o := sm.objs[id]
			if o.owner != root || !strings.HasPrefix(o.typ, "com.example.") {
				continue
			}
			apps++
			if im.objs[id] == nil {
				removed[id] = true
			}
		}
		if apps != st.Apps || len(removed) != st.AppsRemoved {
			t.Fatalf("%+v: %d apps, %d removed; stats %+v", cfg, apps, len(removed), st)
		}
		if want := int(float64(apps)*cfg.RemoveApps + 0.5); len(removed) != want {
			t.Errorf("%+v: removed %d apps, want %d", cfg, len(removed), want)
		}
		doomed := 0
		for _, id := range sm.order {
			in := sm.inside(id, removed)
			if in {
				doomed++
			}
			io := im.objs[id]
			if in == (io != nil) {
				t.Fatalf("%+v: object %s (%s) inside removed app: %v, in incoming: %v", cfg, id, sm.objs[id].typ, in, io != nil)
			}
			if io != nil && (io.owner != sm.objs[id].owner || io.typ != sm.objs[id].typ) {
				t.Fatalf("%+v: object %s changed owner or type", cfg, id)
			}
		}
		for id := range im.objs {
			if sm.objs[id] == nil {
				t.Fatalf("%+v: incoming object %s not in snapshot", cfg, id)
			}
		}
		if doomed != st.DoomedObjects {
			t.Errorf("%+v: %d doomed objects, stats say %d", cfg, doomed, st.DoomedObjects)
		}
	}
}

func TestDanglingRefs(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{
		{Objects: 5000, RemoveApps: 0.3, Seed: 7, DanglingRefs: 0},
		{Objects: 5000, RemoveApps: 0.3, Seed: 7, DanglingRefs: 1},
		{Objects: 5000, RemoveApps: 0.3, Seed: 8, DanglingRefs: 5, Indent: true},
		{Objects: 300, RemoveApps: 0.1, Seed: 9, DanglingRefs: 60},    // more than occur naturally
		{Objects: 20, RemoveApps: 0.5, Seed: 10, DanglingRefs: 3},     // 2 apps
		{Objects: 2000, RemoveApps: 0.9, Seed: 11, DanglingRefs: 500}, // many per survivor
	} {
		snap, inc, st := gen(t, cfg)
		sm, im := parseModel(t, snap), parseModel(t, inc)
		doomed := map[string]bool{}
		for id := range sm.objs {
			if im.objs[id] == nil {
				doomed[id] = true
			}
		}
		dangling := im.refsTo(doomed)
		if len(dangling) != cfg.DanglingRefs || st.DanglingRefs != cfg.DanglingRefs {
			t.Errorf("%+v: %d dangling references (stats %d), want %d", cfg, len(dangling), st.DanglingRefs, cfg.DanglingRefs)
		}
		for _, r := range dangling {
			if im.objs[r.referrer] == nil || !strings.HasPrefix(im.objs[r.referrer].typ, "com.example.") {
				t.Errorf("%+v: dangling reference from %s at %s is not from a surviving app", cfg, r.referrer, r.path)
			}
		}
		// Every reference in the snapshot resolves, and the snapshot has
		// references between apps.
		all := sm.idSet()
		crossApp := 0
		for _, r := range sm.refsTo(all) {
			if strings.HasPrefix(sm.objs[r.value].typ, "com.example.") {
				crossApp++
			}
		}
		if cfg.Objects >= 300 && crossApp == 0 {
			t.Errorf("%+v: no references between apps", cfg)
		}
	}
}

func TestDanglingNeedsRemovedAndSurvivingApps(t *testing.T) {
	for _, cfg := range []Config{
		{Objects: 1000, RemoveApps: 0, DanglingRefs: 1},
		{Objects: 1000, RemoveApps: 1, DanglingRefs: 1},
		{Objects: -1},
		{Objects: 10, RemoveApps: 1.5},
		{Objects: 10, DanglingRefs: -1},
	} {
		if _, err := Generate(io.Discard, io.Discard, cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

func TestSubscribersExist(t *testing.T) {
	t.Parallel()
	snap, inc, _ := gen(t, Config{Objects: 5000, RemoveApps: 0.4, Seed: 5, DanglingRefs: 2})
	for name, data := range map[string][]byte{"snapshot": snap, "incoming": inc} {
		m := parseModel(t, data)
		var nullHandlers, named, volumes int
		for _, id := range m.order {
			o := m.objs[id]
			for i, s := range o.subscribers {
				if m.objs[s] == nil {
					t.Fatalf("%s: %s (%s) has subscriber %s that does not exist", name, id, o.typ, s)
				}
				if o.handlers[i] == nil {
					nullHandlers++
				} else {
					named++
				}
			}
			if strings.HasPrefix(o.typ, "io.murano.resources.CinderVolume") {
				volumes++
				if len(o.subscribers) != 1 || o.subscribers[0] != o.owner || o.handlers[0] != "onVolumeDestroyed" {
					t.Fatalf("%s: volume %s does not subscribe its instance", name, id)
				}
			}
		}
		if nullHandlers == 0 || named == 0 || volumes == 0 {
			t.Errorf("%s: %d null handlers, %d named, %d volumes", name, nullHandlers, named, volumes)
		}
	}
}

func TestShape(t *testing.T) {
	t.Parallel()
	snap, _, _ := gen(t, Config{Objects: 5000, Seed: 6, Indent: true})
	m := parseModel(t, snap)
	root := m.objs[m.order[0]]
	if root.typ != "io.murano.Environment/0.0.0@io.murano" && root.typ != "io.murano.Environment" {
		t.Fatalf("root is %s", root.typ)
	}
	types := map[string]int{}
	legacy := 0
	for _, o := range m.objs {
		types[strings.SplitN(o.typ, "/", 2)[0]]++
		if o.legacy {
			legacy++
		}
	}
	for _, want := range []string{
		"io.murano.CloudRegion", "io.murano.resources.NeutronNetwork",
		"io.murano.resources.LinuxMuranoInstance", "io.murano.resources.CinderVolume",
		"io.murano.resources.NeutronPort", "io.murano.system.NeutronSecurityGroupManager",
		"com.example.databases.MySql", "com.example.apache.ApacheHttpServer",
		"com.example.apache.Tomcat", "com.example.WordPress", "com.example.java.PetClinic",
	} {
		if types[want] == 0 {
			t.Errorf("no %s objects", want)
		}
	}
	if legacy == 0 || legacy > len(m.objs)/3 {
		t.Errorf("%d of %d headers in the legacy style", legacy, len(m.objs))
	}
	for _, key := range []string{`"RegionOne": "`, `"instance": {`, `"instances": [`, `"primaryNetwork": "`,
		`"_26411a1861294160833743e45d0eaad9": {`, `"_actions": {`, `"classVersion": "0.0.0"`} {
		if !bytes.Contains(snap, []byte(key)) {
			t.Errorf("output lacks %s", key)
		}
	}
	// No object references itself.
	all := m.idSet()
	for _, r := range m.refsTo(all) {
		if r.referrer == r.value {
			t.Errorf("%s references itself", r.referrer)
		}
	}
	// Bytes per object roughly like the real models.
	if per := len(snap) / len(m.objs); per < 300 || per > 800 {
		t.Errorf("%d bytes per object", per)
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	cfg := Config{Objects: 2000, RemoveApps: 0.2, Seed: 42, Indent: true, DanglingRefs: 3}
	s1, i1, st1 := gen(t, cfg)
	s2, i2, st2 := gen(t, cfg)
	if !bytes.Equal(s1, s2) || !bytes.Equal(i1, i2) || st1 != st2 {
		t.Fatal("same config, different output")
	}
	cfg.Seed++
	s3, _, _ := gen(t, cfg)
	if bytes.Equal(s1, s3) {
		t.Fatal("different seeds, same output")
	}
	// Compact output is the indented output without whitespace.
	cfg.Seed--
	cfg.Indent = false
	s4, i4, _ := gen(t, cfg)
	for _, pair := range [][2][]byte{{s1, s4}, {i1, i4}} {
		var c bytes.Buffer
		if err := json.Compact(&c, pair[0]); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bytes.TrimSpace(c.Bytes()), bytes.TrimSpace(pair[1])) {
			t.Fatal("compact output differs from the compacted indented output")
		}
	}
	// One writer alone gives the same bytes.
	var only bytes.Buffer
	if _, err := Generate(nil, &only, cfg); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(only.Bytes(), i4) {
		t.Fatal("incoming alone differs")
	}
}

func TestWriteFiles(t *testing.T) {
	dir := t.TempDir() + "/out"
	sp, ip, st, err := WriteFiles(dir, Config{Objects: 500, RemoveApps: 0.2, Seed: 3, Indent: true})
	if err != nil {
		t.Fatal(err)
	}
	for path, n := range map[string]int64{sp: st.SnapshotBytes, ip: st.IncomingBytes} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(data)) != n || !json.Valid(data) {
			t.Errorf("%s: %d bytes (stats %d), valid %v", path, len(data), n, json.Valid(data))
		}
	}
	var a, b map[string]any
	sd, _ := os.ReadFile(sp)
	id, _ := os.ReadFile(ip)
	_ = json.Unmarshal(sd, &a)
	_ = json.Unmarshal(id, &b)
	if reflect.DeepEqual(a, b) {
		t.Error("incoming equals snapshot although apps were removed")
	}
}

func TestExactCountPlan(t *testing.T) {
	t.Parallel()
	for seed := uint64(0); seed < 3; seed++ {
		for n := 10; n < 2000; n++ {
			p, err := newPlan(Config{Objects: n, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			if p.stats.SnapshotObjects != n {
				t.Fatalf("seed %d: planned %d objects for Objects=%d", seed, p.stats.SnapshotObjects, n)
			}
		}
	}
}

func TestFit(t *testing.T) {
	for kind := 0; kind < 50; kind++ {
		for target := minAppSize; target <= maxAppSize; target++ {
			a := appPlan{nInst: uint8(1 + kind%3)}
			for i := 0; i < int(a.nInst); i++ {
				a.vols[i], a.ports[i] = uint8(kind%4), uint8(1+kind%2)
			}
			a.fit(target)
			if a.size() != target || a.nInst < 1 || a.nInst > maxInstances {
				t.Fatalf("fit(%d) gave %+v (size %d)", target, a, a.size())
			}
			for i := 0; i < int(a.nInst); i++ {
				if a.ports[i] < 1 || a.ports[i] > maxPorts || a.vols[i] > maxVolumes {
					t.Fatalf("fit(%d) gave %+v", target, a)
				}
			}
		}
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(b []byte) (int, error) {
	f.n++
	return 0, os.ErrClosed
}

func TestWriteError(t *testing.T) {
	fw := &failWriter{}
	if _, err := Generate(fw, nil, Config{Objects: 200000, Seed: 1}); err == nil {
		t.Fatal("no error from a failing writer")
	}
	if fw.n > 1 {
		t.Errorf("generator kept writing after an error: %d writes", fw.n)
	}
}

func BenchmarkGenerate100k(b *testing.B) {
	for _, indent := range []bool{true, false} {
		name := "compact"
		if indent {
			name = "indent"
		}
		b.Run(name, func(b *testing.B) {
			cfg := Config{Objects: 100000, RemoveApps: 0.1, Seed: 1, Indent: indent, DanglingRefs: 5}
			var st Stats
			for b.Loop() {
				var err error
				st, err = Generate(io.Discard, io.Discard, cfg)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(st.SnapshotBytes + st.IncomingBytes)
			b.ReportMetric(float64(st.SnapshotBytes)/float64(st.SnapshotObjects), "B/object")
		})
	}
}

// TestHostileShapes: every hostile shape is valid JSON and the same
// arguments give the same bytes.
func TestHostileShapes(t *testing.T) {
	for _, s := range Shapes {
		a, b := Hostile(s, 50), Hostile(s, 50)
		if !json.Valid(a) {
			t.Errorf("%s: invalid JSON", s)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two runs differ", s)
		}
	}
}

// TestTiny checks the tiny-objects envelope: valid JSON, n objects in
// ObjectsCopy's apps and none in Objects', about 44 bytes an object.
func TestTiny(t *testing.T) {
	for _, n := range []int{0, 1, 1000} {
		var b bytes.Buffer
		if err := Tiny(&b, n); err != nil {
			t.Fatal(err)
		}
		var m struct {
			Objects, ObjectsCopy struct {
				Apps []struct {
					H struct{ ID, Type string } `json:"?"`
				} `json:"apps"`
			}
		}
		if err := json.Unmarshal(b.Bytes(), &m); err != nil {
			t.Fatalf("n=%d: %v\n%s", n, err, b.String())
		}
		if len(m.Objects.Apps) != 0 || len(m.ObjectsCopy.Apps) != n {
			t.Fatalf("n=%d: %d incoming apps, %d snapshot apps", n, len(m.Objects.Apps), len(m.ObjectsCopy.Apps))
		}
		if n == 1000 {
			if per := b.Len() / n; per < 40 || per > 50 {
				t.Fatalf("%d bytes an object", per)
			}
			if got := m.ObjectsCopy.Apps[999].H.ID; got != "d000000999" {
				t.Fatalf("last id %q", got)
			}
		}
	}
}
