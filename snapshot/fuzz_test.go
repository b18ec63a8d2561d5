package snapshot

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the three loaders: none may panic,
// invalid JSON is always rejected, and every tree that loads satisfies the
// index's invariants (checkInvariants). The corpus in
// testdata/fuzz/FuzzLoad was grown with
// go test -run='^$' -fuzz=FuzzLoad -fuzztime=60s ./snapshot.
func FuzzLoad(f *testing.F) {
	var seeds []string
	for _, pattern := range []string{"../testdata/models/*.json", "../testdata/pairs/*.json"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, files...)
	}
	for _, name := range seeds {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`{"Objects": {"?": {"id": "a", "dependencies": {"onDestruction": [{"subscriber": "b", "handler": null}]}}, "b": {"?": {"id": "b"}, "r": "a"}}, "ObjectsCopy": null}`,
		`{"model": {"ObjectsCopy": [{"?": {"id": "x"}}, {"?": {"id": "x"}, "k": 1}]}}`,
		`[{"?": {"id": "x", "type": "a/1@b"}, "s": {"?": {"id": "x"}}}]`,
		`{"\u003f": {"i\u0064": "e\"x"}, "k": ["e\"x"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDocument("fuzz.json", data)
		valid := json.Valid(data)
		snap, inc, err := LoadModel(d)
		if err == nil {
			if !valid {
				t.Fatal("LoadModel accepted invalid JSON")
			}
			checkInvariants(t, snap)
			checkInvariants(t, inc)
			if snap.Start < inc.End && inc.Start < snap.End && !snap.Null && !inc.Null {
				t.Fatalf("snapshot [%d,%d) and incoming [%d,%d) overlap", snap.Start, snap.End, inc.Start, inc.End)
			}
		}
		s, err := LoadSnapshot(d)
		if err == nil {
			if !valid {
				t.Fatal("LoadSnapshot accepted invalid JSON")
			}
			checkInvariants(t, s)
		}
		g, err := LoadGraph(d)
		if err == nil {
			if !valid {
				t.Fatal("LoadGraph accepted invalid JSON")
			}
			checkInvariants(t, g)
		}
	})
}
