package snapshot

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/objgc/objgc/internal/jsonedit"
)

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
