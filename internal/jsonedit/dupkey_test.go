package jsonedit

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestDuplicateKey(t *testing.T) {
	for _, tc := range []struct {
		in, path, key string
	}{
		{`{"a": 1, "b": 2}`, "", ""},
		{`[{"a": 1}, {"a": 2}]`, "", ""},
		{`{"a": {"a": {"a": 1}}}`, "", ""},
		{` {"a": 1, "a": 2}`, "$.a", "a"},
		{`{"a": 1, "\u0061": 2}`, "$.a", "a"},
		{`{"x": [1, {"y": {"k 1": 1, "k 1": 2}}], "x": 3}`, `$.x[1].y["k 1"]`, "k 1"},
		{`{"groups": [], "z": {"q": 1}, "groups": [[1]]}`, "$.groups", "groups"},
		{`"s"`, "", ""},
		{`{}`, "", ""},
		{`{"a": [], "b": [{"c": 1}], "a": 2}`, "$.a", "a"},
		{`{"k00": 0, "k01": 1, "k02": 2, "k03": 3, "k04": 4, "k05": 5, "k06": 6, "k07": 7, "k08": 8, "k09": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k16": 16, "k17": 17, "k\u0030\u0033": 3}`, "$.k03", "k03"},
		{`{"k00": 0, "k01": 1, "k02": 2, "k03": 3, "k04": 4, "k05": 5, "k06": 6, "k07": 7, "k08": 8, "k09": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k16": 16, "k17": 17}`, "", ""},
		{`{"k00": 0, "k01": 1, "k02": 2, "k03": 3, "k04": 4, "k05": 5, "k06": 6, "k07": 7, "k08": 8, "k09": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k00": 16}`, "$.k00", "k00"},
		{`{"a\"b": {"x": [0, [1, {"q": 1, "q": 2}]]}}`, `$["a\"b"].x[1][1].q`, "q"},
	} {
		path, key, ok := DuplicateKey([]byte(tc.in))
		if ok != (tc.path != "") || path != tc.path || key != tc.key {
			t.Errorf("%s: got %q %q %v, want %q %q", tc.in, path, key, ok, tc.path, tc.key)
		}
	}
}

// FuzzDuplicateKey checks DuplicateKey against encoding/json's tokens.
func FuzzDuplicateKey(f *testing.F) {
	for _, s := range []string{`{"a": 1, "a": 2}`, `[{"a": {"b": 1}}, {"a": 1}]`, `{"\u0061": 1, "a": [1, {}]}`, `{"x": {"y": []}, "z": "\"a\""}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		_, _, got := DuplicateKey(data)
		if want := tokensDuplicate(data); got != want {
			t.Fatalf("DuplicateKey %v, encoding/json's tokens %v", got, want)
		}
	})
}

// tokensDuplicate reports whether a JSON object of the valid data holds a
// key twice, read with encoding/json's tokens.
func tokensDuplicate(data []byte) bool {
	d := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys  map[string]bool
		isKey bool
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
				top.keys[k], top.isKey = true, false
				continue
			}
		}
		if top != nil && top.keys != nil {
			top.isKey = true
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
