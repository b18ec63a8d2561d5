package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestDuplicateKeys checks that a key written twice in any JSON object of
// a document is refused at the second one's path, and that keys that only
// look alike (one length, one prefix, one hash bucket) are not.
func TestDuplicateKeys(t *testing.T) {
	wideOf := func(format, dup string) string {
		var b strings.Builder
		b.WriteString(`{"?": {"id": "e"}, "p": {`)
		for i := range 100 {
			fmt.Fprintf(&b, format+`: %d, `, i, i)
		}
		b.WriteString(dup + `"last": 0}}`)
		return b.String()
	}
	wide := func(dup string) string { return wideOf(`"key%03d"`, dup) }
	for _, tc := range []struct {
		name, in string
		want     string // "" when the document is accepted
	}{
		{"envelope", `{"Objects": null, "ObjectsCopy": null, "Objects": {"?": {"id": "e"}}}`, `$.Objects: duplicate key "Objects" (the first at line 1)`},
		{"escaped", `{"Objects": null, "Obj\u0065cts": null}`, `$.Objects: duplicate key "Objects"`},
		{"escaped long", `{"?": {"id": "e"}, "longer key": 1, "longer\u0020key": 2}`, `$["longer key"]: duplicate key "longer key"`},
		{"task", "{\"model\": {\"Objects\": null},\n\"model\": {\"Objects\": null}}", `$.model: duplicate key "model" (the first at line 1)`},
		{"header member", `{"?": {"id": "e", "type": "a", "id": "f"}}`, `$["?"].id: duplicate key "id"`},
		{"escaped header", `{"?": {"id": "e"}, "\u003f": {"id": "f"}}`, `duplicate "?" key`},
		{"dependencies", `{"?": {"id": "e", "dependencies": null, "dependencies": {"onDestruction": []}}}`, `$["?"].dependencies: duplicate key "dependencies"`},
		{"records", `{"?": {"id": "e", "dependencies": {"onDestruction": [], "onDestruction": [{"subscriber": "e", "handler": null}]}}}`, `$["?"].dependencies.onDestruction: duplicate key "onDestruction"`},
		{"record member", `{"?": {"id": "e", "dependencies": {"onDestruction": [{"subscriber": "e", "handler": "a", "subscriber": "f"}]}}}`, `$["?"].dependencies.onDestruction[0].subscriber: duplicate key "subscriber"`},
		{"in a header value", `{"?": {"id": "e", "_designer": {"x": [{"y": 1, "y": 1}]}}}`, `$["?"]._designer.x[0].y: duplicate key "y"`},
		{"property", `{"?": {"id": "e"}, "a": "e", "b": 1, "a": null}`, `$.a: duplicate key "a"`},
		{"plain object", `[{"?": {"id": "e"}, "p": {"q": {"r": 1, "s": 2, "r": 3}}}]`, `$[0].p.q.r: duplicate key "r"`},
		{"empty key", `{"?": {"id": "e"}, "": 1, "": 2}`, `duplicate key ""`},
		{"last bytes", `{"?": {"id": "e"},"a":1,"a":2}`, `$.a: duplicate key "a"`},
		{"wide", wide(`"key042": 0, `), `$.p.key042: duplicate key "key042"`},
		{"wide, first of two", wide(`"key077": 0, "key013": 0, `), `$.p.key077: duplicate key "key077"`},
		{"distinct", `{"?": {"id": "e"}, "propertyNameA": 1, "propertyNameB": 2, "propertyNameAB": 3, "a": 1, "A": 2, "a\u0000": 3, "": 4, "abcdefg": 5, "abcdefgh": 6, "abcdefgi": 7}`, ""},
		{"distinct wide", wide(""), ""},
		{"wide, 12 bytes", wideOf(`"property%03d"`, `"property042": 0, `), `$.p.property042: duplicate key "property042"`},
		{"wide, 16 bytes", wideOf(`"long%03d property"`, `"long099 property": 0, `), `$.p["long099 property"]: duplicate key "long099 property"`},
		{"wide, 24 bytes", wideOf(`"a longer key, number %03d"`, `"a longer key, number 007": 0, `), `duplicate key "a longer key, number 007"`},
		{"distinct wide, 12 bytes", wideOf(`"property%03d"`, ""), ""},
		{"same key in two objects", `{"?": {"id": "e"}, "a": {"a": {"a": 1}}, "b": [{"a": 1}, {"a": 2}]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadGraph(NewDocument("m.json", []byte(tc.in)))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "m.json: ") {
				t.Fatalf("error %v does not name the file", err)
			}
		})
	}
}

// TestDuplicateKeysParallel checks that a duplicate key inside a tree read
// by a scanner of its own is refused as the one-pass reader refuses it.
func TestDuplicateKeysParallel(t *testing.T) {
	pad := `"pad": [` + strings.Repeat(`"x", `, 2000) + `"x"]`
	data := []byte(`{"Objects": {"?": {"id": "e"}, ` + pad + `}, "ObjectsCopy": {"?": {"id": "e"}, ` + pad + `, "k": {"a": 1, "a": 2}}}`)
	_, _, err := LoadModel(parallelDoc("m.json", data))
	if err == nil || !strings.Contains(err.Error(), `m.json: $.ObjectsCopy.k.a: duplicate key "a"`) {
		t.Fatalf("error %v, want the duplicate key", err)
	}
}

// TestDuplicateKeyHashCollision checks that two distinct keys whose hashes
// are equal are not taken for one: the members before the second are read
// again, and a key that is written twice is still found that way.
func TestDuplicateKeyHashCollision(t *testing.T) {
	for _, tc := range []struct {
		data string
		dup  bool
	}{
		{`{"first long key": 1, "other long key": 2}`, false},
		{`{"other long key": {"a": [1, "}"]}, "other long key": 2}`, true},
	} {
		data := []byte(tc.data)
		ks := bytes.LastIndex(data, []byte(`"other long key"`)) + 1
		ke := ks + len("other long key")
		s := &scanner{file: "m.json", data: data, path: []int32{0}}
		set := s.openKeys()
		// The first key is recorded with the second one's hash: a collision.
		k := objKey{start: ks, end: ke, hash: s.keyHash(ks, ke, false)}
		s.keys = append(s.keys, k.hash)
		set.seen = ^uint64(0)
		var err error
		if !s.newKey(&set, k.hash) {
			err = s.addKey(&set, 0, 0, k)
		}
		if tc.dup {
			if err == nil || !strings.Contains(err.Error(), `duplicate key "other long key"`) {
				t.Fatalf("%s: error %v, want the duplicate key", tc.data, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("distinct keys with equal hashes refused: %v", err)
		}
		if len(s.keys) != 2 {
			t.Fatalf("%d hashes kept, want 2", len(s.keys))
		}
	}
}

// hasDuplicateKey reports whether a JSON object of the valid document data
// holds a key twice, read with encoding/json's tokens: the fuzz test's
// reference.
func hasDuplicateKey(data []byte) bool {
	d := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys  map[string]bool
		isKey bool // the next token of an object is a key
	}
	var stack []*frame
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.keys != nil && top.isKey {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					return true
				}
				top.keys[k] = true
				top.isKey = false
				continue
			}
		}
		if top != nil && top.keys != nil {
			top.isKey = true // this token is (or opens) a value
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, isKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].keys != nil {
				stack[len(stack)-1].isKey = true
			}
		}
	}
}

// TestKeyForms checks scanner.key on the keys its one-word reading takes
// (short and plain, a ':' with one space or none) and those it leaves to
// the general reading: each key's hash is keyHash of its decoded text,
// and the reading stops on the value.
func TestKeyForms(t *testing.T) {
	for _, tc := range []struct {
		in, key string
	}{
		{`"a": 1`, "a"},
		{`"a":1`, "a"},
		{`"a"  :  1`, "a"},
		{"\"a\":\n\t1", "a"},
		{`"a" :1`, "a"},
		{`"": 1`, ""},
		{`"abcdefg": 1`, "abcdefg"},
		{`"abcdefgh": 1`, "abcdefgh"},
		{`"Objects": {}`, "Objects"},
		{`"a\"b": 1`, `a"b`},
		{`"a\u0062": 1`, "ab"},
		{`"\u003f": {}`, "?"},
		{`"é": 1`, "é"},
		{"\"a\x7f\": 1", "a\x7f"},
		{`"a":"b"`, "a"},
		{`"a":1`, "a"}, // the value is the last byte
		{`"?": 1`, "?"},
	} {
		data := []byte(tc.in)
		s := &scanner{file: "m.json", data: data}
		k, err := s.key()
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if want := shortOrHash(tc.key); k.hash != want {
			t.Errorf("%q: hash %#x, want %#x", tc.in, k.hash, want)
		}
		if got := keyAt(data, k.start-1); got != tc.key {
			t.Errorf("%q: key %q, want %q", tc.in, got, tc.key)
		}
		want := strings.LastIndexByte(tc.in, ':') + 1
		for strings.IndexByte(" \t\n", tc.in[want]) >= 0 {
			want++
		}
		if s.pos != want {
			t.Errorf("%q: the value read from %d, want %d", tc.in, s.pos, want)
		}
	}
	for _, in := range []string{`"a" 1`, `"a`, "\"a\x01\": 1", `"a\x": 1`, `a: 1`} {
		s := &scanner{file: "m.json", data: []byte(in)}
		if _, err := s.key(); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
