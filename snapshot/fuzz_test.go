package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzLoad feeds arbitrary bytes to the three loaders: none may panic,
// invalid JSON or UTF-8 is always rejected, valid JSON in UTF-8 is never
// refused as a syntax error and is refused for a header string only when
// it holds an escape or a control character (checkRefusal), and every
// tree that loads satisfies the index's invariants (checkInvariants), and
// the trees scanned in parallel are what one pass reads (checkParallelSame). The corpus in
// testdata/fuzz/FuzzLoad was grown with
// go test -run='^$' -fuzz=FuzzLoad -fuzztime=60s ./snapshot.
func FuzzLoad(f *testing.F) {
	var seeds []string
	for _, pattern := range []string{"../testdata/models/*.json", "../testdata/pairs/*.json"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		if len(files) == 0 {
			f.Fatalf("no seeds at %s: the committed fixtures are missing", pattern)
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
		`{"Objects": {"?": {"id": "vm-\u00e9"}, "r": "vm-é", "s": "vm-\ud800"}, "ObjectsCopy": [{"?": {"id": "a\u2028b"}}]}`,
		`{"Objects": {"?": {"id": "a\u001b[2J"}}}`,
		`{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [{"subscriber": "\udc00", "handler": null}]}}}}`,
		"{\"Objects\": [\"\xed\xa0\x80\", \"\xc0\xaf\", \"\u0085\"]}",
		`{"Objects": {"?": {"id": "a", "id": "b"}, "k": {"x": 1, "y": 2, "\u0078": 3}}, "ObjectsCopy": null, "Objects": null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParallelSame(t, data)
		d := NewDocument("fuzz.json", data)
		// Accepted input is valid JSON and UTF-8 (RFC 8259 sections 2 and
		// 8.1); json.Valid alone lets invalid UTF-8 in strings through.
		valid := json.Valid(data) && utf8.Valid(data)
		snap, inc, err := LoadModel(d)
		checkRefusal(t, data, valid, err)
		if err == nil {
			if !valid {
				t.Fatal("LoadModel accepted invalid JSON")
			}
			checkInvariants(t, snap)
			checkInvariants(t, inc)
			checkHeaderText(t, snap)
			checkHeaderText(t, inc)
			if snap.Start < inc.End && inc.Start < snap.End && !snap.Null && !inc.Null {
				t.Fatalf("snapshot [%d,%d) and incoming [%d,%d) overlap", snap.Start, snap.End, inc.Start, inc.End)
			}
		}
		if valid {
			// Every copy's path, put back together from the segments
			// recorded after its anchor, is the one found from the root.
			checkObjectPathsOnce(t, "fuzz.json", data, 0)
		}
		s, err := LoadSnapshot(d)
		checkRefusal(t, data, valid, err)
		if err == nil {
			if !valid {
				t.Fatal("LoadSnapshot accepted invalid JSON")
			}
			checkInvariants(t, s)
		}
		g, err := LoadGraph(d)
		checkRefusal(t, data, valid, err)
		if err == nil {
			if !valid {
				t.Fatal("LoadGraph accepted invalid JSON")
			}
			checkInvariants(t, g)
		}
	})
}

// checkRefusal checks a loader's error against what the input is: valid
// JSON in UTF-8 is never a *SyntaxError, and a refused header string
// (control character, lone surrogate) needs an escape, DEL or a C1
// control somewhere in the bytes.
func checkRefusal(t *testing.T, data []byte, valid bool, err error) {
	t.Helper()
	if !valid {
		return
	}
	// A key written twice in one object is refused, and only then.
	dup := hasDuplicateKey(data)
	switch {
	case err == nil && dup:
		t.Fatal("accepted a JSON object with a key written twice")
	case err != nil && strings.Contains(err.Error(), "duplicate") && !dup:
		t.Fatalf("refused a duplicate key that is not there: %v", err)
	}
	if err == nil {
		return
	}
	var se *SyntaxError
	if errors.As(err, &se) {
		t.Fatalf("valid JSON in UTF-8 refused as invalid: %v", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "control character") || strings.Contains(msg, "lone UTF-16 surrogate") {
		if !bytes.ContainsAny(data, "\\\x7f\u0080\u0081\u0082\u0083\u0084\u0085\u0086\u0087\u0088\u0089\u008a\u008b\u008c\u008d\u008e\u008f\u0090\u0091\u0092\u0093\u0094\u0095\u0096\u0097\u0098\u0099\u009a\u009b\u009c\u009d\u009e\u009f") {
			t.Fatalf("refused a header string with no escape and no control character: %v", err)
		}
	}
}

// checkHeaderText: every id, type and handler of an accepted tree is valid
// UTF-8 without a control character, as docs/decisions.md promises.
func checkHeaderText(t *testing.T, tr *Tree) {
	t.Helper()
	check := func(what, s string) {
		if !utf8.ValidString(s) {
			t.Fatalf("%s %q is not UTF-8", what, s)
		}
		for _, r := range s {
			if r < 0x20 || r >= 0x7f && r <= 0x9f {
				t.Fatalf("%s %q holds control character %U", what, s, r)
			}
		}
	}
	for i := range tr.Objects {
		ty := tr.Type(int32(i))
		check("id", tr.ID(int32(i)))
		check("type", tr.TypeString(int32(i)))
		check("version", ty.Version)
		check("package", ty.Package)
		for _, d := range tr.Dependencies(int32(i)) {
			check("subscriber", d.Subscriber)
			check("handler", d.Handler)
		}
	}
}
