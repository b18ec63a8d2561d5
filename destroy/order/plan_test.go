package order

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/objgc/objgc/diff"
	"github.com/objgc/objgc/snapshot"
)

func planFile(t *testing.T, name string) *Plan {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "pairs", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	snap, in, err := snapshot.LoadModel(snapshot.NewDocument(path, data))
	if err != nil {
		t.Fatal(err)
	}
	return NewPlan(mustCompare(snap, in))
}

// mustCompare is diff.Compare of trees held in memory, which cannot fault.
func mustCompare(snap, in *snapshot.Tree) *diff.Result {
	r, err := diff.Compare(snap, in)
	if err != nil {
		panic(err)
	}
	return r
}

// planJSON plans two bare object trees (or envelopes), as --snapshot and
// --graph do.
func planJSON(t *testing.T, snapJSON, incomingJSON string) *Plan {
	t.Helper()
	snap, err := snapshot.LoadSnapshot(snapshot.NewDocument("snap.json", []byte(snapJSON)))
	if err != nil {
		t.Fatal(err)
	}
	in, err := snapshot.LoadGraph(snapshot.NewDocument("in.json", []byte(incomingJSON)))
	if err != nil {
		t.Fatal(err)
	}
	return NewPlan(mustCompare(snap, in))
}

// groupIDs returns the plan's groups as ids, in destruction order.
func groupIDs(p *Plan) [][]string {
	var out [][]string
	for _, g := range p.Groups {
		var ids []string
		for _, i := range g.Objects {
			ids = append(ids, p.ID(int(i)))
		}
		out = append(out, ids)
	}
	return out
}

func TestPlanRealPairs(t *testing.T) {
	tests := []struct {
		file   string
		groups [][]string
	}{
		{"app-removed.json", [][]string{
			{"76b9ca88-c668-4e37-a830-5845adc10b0e"},
			{"769af50c-9629-4694-b623-e9b392941279", "fda74653-8b66-42e2-be16-12ebc87d7570"},
		}},
		{"region-removed.json", [][]string{{"72d2c13c600247c98e09e2e3c1cd9d70"}, {"f8cb28d147914850978edb35eca156e1"}}},
		{"task-region-removed.json", [][]string{{"72d2c13c600247c98e09e2e3c1cd9d70"}, {"f8cb28d147914850978edb35eca156e1"}}},
		{"wordpress-app-removed.json", [][]string{{"fec71a35-8abc-4a8f-a5e4-91e77854d761"}}},
		{"app-moved.json", nil},
		{"environment-deleted.json", [][]string{
			{"825dc61d-217a-4fd8-80fc-43807f8d6fa2", "3ddd4945-e4b8-4dac-9f85-537fc0957151", "0b568a74-66c9-4e73-84d8-7dd1b96066ec"},
			{"c46770dec1db483ca2322914b842e50f", "e7a13d3c-b3c9-42fa-975d-a47b142fd233", "d224db7d-081d-47a4-9333-9d2677b90b1f",
				"33e91790-5c44-40ce-9292-9dd4856325a0", "19a87de5-41ce-4e63-bf43-0e25dd409a1e", "fec71a35-8abc-4a8f-a5e4-91e77854d761"},
			{"83bff5acf8354816b08cf9b4917c898d"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p := planFile(t, tt.file)
			if got := groupIDs(p); !reflect.DeepEqual(got, tt.groups) {
				t.Errorf("groups = %v\nwant %v", got, tt.groups)
			}
		})
	}
}

func TestPlanNotificationsAscendingBeforeDestroys(t *testing.T) {
	p := planFile(t, "region-removed-handlers.json")
	type note struct {
		group             int
		pub, sub, handler string
		doomed            bool
	}
	var got []note
	for _, n := range p.Notifications {
		got = append(got, note{n.Group, p.ID(n.Publisher), n.Subscriber, n.Handler, n.SubscriberDoomed})
	}
	want := []note{
		{1, "f8cb28d147914850978edb35eca156e1", "f7f22c174070455c9cafc59391402bdc", "onRegionRemoved", false},
		{2, "72d2c13c600247c98e09e2e3c1cd9d70", "f8cb28d147914850978edb35eca156e1", "onNetworkDestroyed", true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("notifications = %+v\nwant %+v", got, want)
	}
}

func TestPlanDependencyRecordsEverywhere(t *testing.T) {
	// The network's record sits in a later duplicate copy, the app's in a
	// header after its properties; both are honoured, once each.
	snap := `{"?": {"id": "env", "type": "io.murano.Environment"},
	  "apps": [
	    {"vm": {"?": {"id": "vm", "type": "io.murano.resources.Instance"}}, "?": {"id": "app", "type": "A",
	      "dependencies": {"onDestruction": [{"subscriber": "other", "handler": "onAppGone"}]}}},
	    {"?": {"id": "other", "type": "B"}, "uses": "app"}
	  ],
	  "net": {"?": {"id": "net", "type": "N"}},
	  "copy": {"?": {"id": "net", "type": "N", "dependencies": {"onDestruction": [
	    {"subscriber": "vm", "handler": null}, {"subscriber": "vm", "handler": null}]}}}
	}`
	in := `{"?": {"id": "env", "type": "io.murano.Environment"}, "apps": [{"?": {"id": "other", "type": "B"}}]}`
	p := planJSON(t, snap, in)
	// net must go before vm (vm subscribes), vm before app (owned).
	want := [][]string{{"net"}, {"vm"}, {"app"}}
	if got := groupIDs(p); !reflect.DeepEqual(got, want) {
		t.Errorf("groups = %v, want %v", got, want)
	}
	if len(p.Notifications) != 1 || p.Notifications[0].Handler != "onAppGone" || p.Notifications[0].Subscriber != "other" {
		t.Errorf("notifications = %+v", p.Notifications)
	}
}

func TestPlanWarnings(t *testing.T) {
	snap := `{"?": {"id": "env", "type": "E"},
	  "a": {"?": {"id": "a", "type": "T/1.0@p", "dependencies": {"onDestruction": [
	     {"subscriber": "b", "handler": null}, {"subscriber": "ghost", "handler": "h"}]}}},
	  "b": {"?": {"id": "b", "type": "T", "dependencies": {"onDestruction": [{"subscriber": "a", "handler": null}]}}},
	  "noid": {"?": {"type": "X"}},
	  "c": {"?": {"id": "c", "type": "Old"}}
	}`
	in := `{"?": {"id": "env", "type": "E"}, "c": {"?": {"id": "c", "type": "New"}}, "ref": "a"}`
	p := planJSON(t, snap, in)
	codes := map[WarnCode]int{}
	for _, w := range p.AllWarnings() {
		codes[w.Code]++
	}
	want := map[WarnCode]int{WarnCycle: 1, WarnSubscriberMissing: 1, WarnIDless: 1, WarnTypeChanged: 1, WarnDangling: 1}
	if !reflect.DeepEqual(codes, want) {
		t.Errorf("warning codes = %v, want %v\n%+v", codes, want, p.AllWarnings())
	}
	if len(p.Cycles) != 1 || len(p.Cycles[0]) != 2 {
		t.Errorf("cycles = %v", p.Cycles)
	}
}

// TestPlanEnvironmentDestroyed: dooming the snapshot's root object warns
// environment_destroyed, naming the incoming root when there is one;
// dooming anything else does not.
func TestPlanEnvironmentDestroyed(t *testing.T) {
	snap := `{"?": {"id": "env1", "type": "E"}, "a": {"?": {"id": "a", "type": "T"}}}`
	for _, c := range []struct {
		name, in, want string
	}{
		{"other environment", `{"?": {"id": "env2", "type": "E"}}`, "the incoming model's root is env2"},
		{"deleted", `null`, "the incoming model has no objects"},
		{"app removed", `{"?": {"id": "env1", "type": "E"}}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := planJSON(t, snap, c.in)
			var got []Warning
			for _, w := range p.AllWarnings() {
				if w.Code == WarnEnvironmentDestroyed {
					got = append(got, w)
				}
			}
			switch {
			case c.want == "" && len(got) != 0:
				t.Errorf("warnings %+v; want no environment_destroyed", got)
			case c.want != "" && (len(got) != 1 || got[0].ID != "env1" || !strings.Contains(got[0].Message, c.want)):
				t.Errorf("warnings %+v; want one for env1 saying %q", got, c.want)
			}
		})
	}
}

// reasonsSnapshot holds every kind of reason: a cycle (a and b), a
// subscriber named twice with two handlers, a publisher naming itself, a
// missing and a live subscriber, an owned object that also subscribes to
// its owner (d and e), and a publisher with more subscribers (s0..s8, s0
// twice) than Plan.doomedSubscribers checks without a set.
const reasonsSnapshot = `{"?": {"id": "env", "type": "E"},
 "a": {"?": {"id": "a", "type": "T", "dependencies": {"onDestruction": [
     {"subscriber": "b", "handler": "h1"}, {"subscriber": "b", "handler": "h2"}, {"subscriber": "a", "handler": null},
     {"subscriber": "ghost", "handler": null}, {"subscriber": "live", "handler": "h"}, {"subscriber": "d", "handler": null}]}}},
 "b": {"?": {"id": "b", "type": "T", "dependencies": {"onDestruction": [{"subscriber": "a", "handler": null}]}}},
 "e": {"?": {"id": "e", "type": "T/1.0@pkg"},
   "d": {"?": {"id": "d", "type": "T", "dependencies": {"onDestruction": [{"subscriber": "e", "handler": null}]}}}},
 "p": {"?": {"id": "p", "type": "P", "dependencies": {"onDestruction": [
     {"subscriber": "s0", "handler": null}, {"subscriber": "s1", "handler": null}, {"subscriber": "s2", "handler": null},
     {"subscriber": "s3", "handler": null}, {"subscriber": "s4", "handler": null}, {"subscriber": "s5", "handler": null},
     {"subscriber": "s6", "handler": null}, {"subscriber": "s7", "handler": null}, {"subscriber": "s8", "handler": "x"},
     {"subscriber": "s0", "handler": "x"}, {"subscriber": "live", "handler": null}, {"subscriber": "p", "handler": null}]}}},
 "s": [{"?": {"id": "s0", "type": "S"}}, {"?": {"id": "s1", "type": "S"}}, {"?": {"id": "s2", "type": "S"}},
       {"?": {"id": "s3", "type": "S"}}, {"?": {"id": "s4", "type": "S"}}, {"?": {"id": "s5", "type": "S"}},
       {"?": {"id": "s6", "type": "S"}}, {"?": {"id": "s7", "type": "S"}}, {"?": {"id": "s8", "type": "S"}}],
 "live": {"?": {"id": "live", "type": "L"}}
}`

// TestPlanReasonsAndSuccessors: the plan keeps 8 bytes a doomed object
// and finds its reasons, successors and the rest again in the snapshot
// (so that its memory stays near the input's); they are what the
// ordering decided (the same as the plan printed when it kept them,
// checked against that build's output).
func TestPlanReasonsAndSuccessors(t *testing.T) {
	p := planJSON(t, reasonsSnapshot, `{"?": {"id": "env", "type": "E"}, "live": {"?": {"id": "live", "type": "L"}}}`)
	survives := Reason{Code: ReasonOwnerSurvives, ID: "env"}
	subs := func(code ReasonCode, ids ...string) []Reason {
		var out []Reason
		for _, id := range ids {
			out = append(out, Reason{Code: code, ID: id})
		}
		return out
	}
	s := []string{"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"}
	wantReasons := map[string][]Reason{
		"a": append([]Reason{survives}, append(subs(ReasonCycle, "b"), subs(ReasonSubscriber, "d")...)...),
		"b": append([]Reason{survives}, subs(ReasonCycle, "a")...),
		"d": append([]Reason{{Code: ReasonOwnedBy, ID: "e"}}, subs(ReasonSubscriber, "e")...),
		"e": {survives},
		"p": append([]Reason{survives}, subs(ReasonSubscriber, s...)...),
	}
	wantSucc := map[string][]string{"a": {"b", "d"}, "b": {"a"}, "d": {"e"}, "e": nil, "p": s}
	for _, id := range s {
		wantReasons[id] = []Reason{survives}
		wantSucc[id] = nil
	}
	if len(p.Objects) != len(wantReasons) {
		t.Fatalf("%d doomed objects, want %d", len(p.Objects), len(wantReasons))
	}
	for i := range p.Objects {
		id := p.ID(i)
		if got := p.Reasons(i); !reflect.DeepEqual(got, wantReasons[id]) {
			t.Errorf("reasons of %s = %+v\nwant %+v", id, got, wantReasons[id])
		}
		var succ []string
		for _, k := range p.Successors(i) {
			succ = append(succ, p.ID(k))
		}
		if !reflect.DeepEqual(succ, wantSucc[id]) {
			t.Errorf("successors of %s = %v, want %v", id, succ, wantSucc[id])
		}
		o := p.Object(i)
		if o.ID != id || o.Path != p.Path(i) || int32(o.Group) != p.Objects[i].Group || o.Snapshot != p.Objects[i].Snapshot ||
			!reflect.DeepEqual(o.Reasons, wantReasons[id]) {
			t.Errorf("object %d = %+v", i, o)
		}
	}
	e := p.Object(slices.IndexFunc(p.Objects, func(d Doomed) bool { return p.Diff.Snapshot.ID(d.Snapshot) == "e" }))
	d := p.Object(slices.IndexFunc(p.Objects, func(d Doomed) bool { return p.Diff.Snapshot.ID(d.Snapshot) == "d" }))
	if e.Type != "T/1.0@pkg" || e.Class != "T" || e.Owner != "env" || e.Path != "$.e" || e.Group != 1 ||
		d.Owner != "e" || d.Path != "$.e.d" || d.Group != 2 {
		t.Errorf("e = %+v, d = %+v", e, d)
	}

	// The environment deleted: its root is doomed and has no owner.
	p = planJSON(t, reasonsSnapshot, `null`)
	for i := range p.Objects {
		switch id, r := p.ID(i), p.Reasons(i); id {
		case "env":
			if !reflect.DeepEqual(r, []Reason{{Code: ReasonTopLevel}}) || p.Object(i).Owner != "" {
				t.Errorf("env: reasons %+v, owner %q", r, p.Object(i).Owner)
			}
		case "live", "b", "e", "p":
			if r[0] != (Reason{Code: ReasonOwnedBy, ID: "env"}) {
				t.Errorf("%s: reasons %+v", id, r)
			}
		}
	}
}

// TestPlanLazyWarnings: the comparison's warnings (dangling references,
// id-less objects, later copies that differ, changed types) are kept as
// what each is about, 8 bytes each, and Warning makes them whole in the
// order the plan found them: after the ordering's warnings, before those
// appended later.
func TestPlanLazyWarnings(t *testing.T) {
	snap := `{"?": {"id": "env", "type": "E"},
	  "a": {"?": {"id": "a", "type": "T"}, "x": 1},
	  "again": [{"?": {"id": "a", "type": "T"}, "x": 2}],
	  "noid": {"?": {"type": "X"}},
	  "p": {"?": {"id": "p", "type": "T", "dependencies": {"onDestruction": [{"subscriber": "q", "handler": null}]}}},
	  "q": {"?": {"id": "q", "type": "T", "dependencies": {"onDestruction": [{"subscriber": "p", "handler": null}]}}},
	  "c": {"?": {"id": "c", "type": "Old"}}
	}`
	in := `{"?": {"id": "env", "type": "E"}, "refs": ["a", {"k": "a"}], "c": {"?": {"id": "c", "type": "New"}},
	  "b": {"?": {"id": "b", "type": "T"}}, "d": [{"?": {"id": "b", "type": "T"}, "y": 1}]}`
	p := planJSON(t, snap, in)
	later := Warning{Code: WarnPackageMissing, ID: "x", Message: "appended once the plan is made"}
	p.Warnings = append(p.Warnings, later)
	want := []Warning{
		{Code: WarnCycle, ID: "p", Path: "$.p", Message: "destruction dependencies form a cycle among p, q; their dependency order is ignored, ownership is kept"},
		{Code: WarnDangling, ID: "a", Path: "$.refs[0]", Message: "env references doomed object a at $.refs[0]"},
		{Code: WarnDangling, ID: "a", Path: "$.refs[1].k", Message: "env references doomed object a at $.refs[1].k"},
		{Code: WarnIDless, Path: "$.noid", Message: "object of type X at $.noid has no id: it cannot be tracked between deployments and is never destroyed"},
		{Code: WarnDuplicateDiffers, ID: "a", Path: "$.again[0]", Message: "object a is written more than once with different content (snap.json: first at $.a, again at $.again[0]); the first copy is used"},
		{Code: WarnDuplicateDiffers, ID: "b", Path: "$.d[0]", Message: "object b is written more than once with different content (in.json: first at $.b, again at $.d[0]); the first copy is used"},
		{Code: WarnTypeChanged, ID: "c", Path: "$.c", Message: "object c changed type from Old to New: it is the same object and is not destroyed"},
		later,
	}
	if got := p.AllWarnings(); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n got %+v\nwant %+v", got, want)
	}
	if p.WarningCount() != len(want) || len(p.Warnings) != 2 || len(p.lazy) != 6 {
		t.Errorf("%d warnings, %d whole and %d kept as what they are about; want %d, 2 and 6", p.WarningCount(), len(p.Warnings), len(p.lazy), len(want))
	}
	if n := unsafe.Sizeof(lazyWarning{}); n > 8 {
		t.Errorf("a lazy warning takes %d bytes, more than 8", n)
	}
}
