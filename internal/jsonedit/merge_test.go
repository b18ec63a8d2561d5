package jsonedit

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// anyPatch is a Guard that allows every change.
type anyPatch struct{}

func (anyPatch) Key(string, string) error                { return nil }
func (anyPatch) Replace([]byte, int, string, bool) error { return nil }
func (anyPatch) Set([]byte, string) error                { return nil }

// TestMergePatchOracle: MergePatch gives the document the RFC 7386 oracle
// (github.com/evanphx/json-patch/v5, see oracleMergePatch) gives, while
// keeping the target's bytes (see want).
func TestMergePatchOracle(t *testing.T) {
	tests := []struct {
		target, patch, want string
	}{
		// RFC 7386 Appendix A, the examples with an object on both sides.
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b", "b":"c"}`}, // one member: no separator to copy
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a": {"b": "c"}}`, `{"a": {"b": "d", "c": null}}`, `{"a": {"b": "d"}}`},
		{`{"a": [{"b":"c"}]}`, `{"a": [1]}`, `{"a": [1]}`},
		{`{"e":null}`, `{"a":1}`, `{"e":null, "a":1}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a": {"bb":{}}}`},
		{`{"a":1}`, `{"a":[{"b":null},null]}`, `{"a":[{"b":null},null]}`},
		// In the style of the target.
		{`{"a": 1, "b": 2}`, `{"a": 3}`, `{"a": 3, "b": 2}`},
		{`{"a": 1}`, `{"c": {"d": null, "e": [null]}}`, `{"a": 1, "c": {"e":[null]}}`},
		{"{\n  \"a\": 1,\n  \"b\": {\n    \"c\": 2\n  }\n}", `{"b": {"c": null, "d": {"e": 1}}}`, "{\n  \"a\": 1,\n  \"b\": {\n    \"d\": {\n      \"e\": 1\n    }\n  }\n}"},
		{"{\n  \"a\": 1\n}", `{"n": [1, {"x": null}]}`, "{\n  \"a\": 1,\n  \"n\": [\n    1,\n    {\n      \"x\": null\n    }\n  ]\n}"},
		{`{"a": "s"}`, `{"a": {"b": 1, "c": null}}`, `{"a": {"b":1}}`},
		{`{ }`, `{"a": 1}`, `{"a": 1}`},
		{"{\n  \"a\": 1,\n  \"b\": 2\n}", `{"a": null, "b": null, "c": true}`, "{\n  \"c\": true\n}"},
		{`{"a.b": 1, "k\"q": 2}`, `{"a.b": null, "k\"q": 3, "*": 4}`, `{"k\"q": 3, "*": 4}`},
		{`{"a": 1}`, `{}`, `{"a": 1}`},
		{`{"x": {"?": {"id": "1"}, "p": 1}}`, `{"x": {"p": 2}}`, `{"x": {"?": {"id": "1"}, "p": 2}}`},
		{`{"t": "<b>&amp;</b>", "big": 12345678901234567890}`, `{"u": "x<y"}`, `{"t": "<b>&amp;</b>", "big": 12345678901234567890, "u": "x<y"}`},
	}
	for _, tt := range tests {
		got, err := MergePatch([]byte(tt.target), []byte(tt.patch), "$", anyPatch{})
		if err != nil {
			t.Errorf("%s + %s: %v", tt.target, tt.patch, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s + %s =\n%s\nwant\n%s", tt.target, tt.patch, got, tt.want)
		}
		ref, err := oracleMergePatch([]byte(tt.target), []byte(tt.patch))
		if err != nil {
			t.Fatal(err)
		}
		var g, r any
		dec := json.NewDecoder(strings.NewReader(string(got)))
		dec.UseNumber()
		if err := dec.Decode(&g); err != nil {
			t.Errorf("%s + %s = %s: %v", tt.target, tt.patch, got, err)
			continue
		}
		dec = json.NewDecoder(strings.NewReader(string(ref)))
		dec.UseNumber()
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, r) {
			t.Errorf("%s + %s =\n%s\nthe oracle gives\n%s", tt.target, tt.patch, got, ref)
		}
	}
}

// refuse is a Guard that refuses one kind of change.
type refuse string

func (g refuse) Key(k, path string) error {
	if g == "key" && k == "k" {
		return errRefused(path)
	}
	return nil
}

func (g refuse) Replace(_ []byte, _ int, path string, remove bool) error {
	if g == "remove" && remove || g == "replace" && !remove {
		return errRefused(path)
	}
	return nil
}

func (g refuse) Set(_ []byte, path string) error {
	if g == "set" {
		return errRefused(path)
	}
	return nil
}

type errRefused string

func (e errRefused) Error() string { return "refused at " + string(e) }

// TestMergePatchGuard: each change asks the guard first, with the JSON
// path of the value it changes, and the guard's error stops the merge.
func TestMergePatchGuard(t *testing.T) {
	target := `{"o": {"k": 1, "n": 2}, "x y": 3}`
	tests := []struct {
		guard refuse
		patch string
		want  string // the error, "" for none
	}{
		{"key", `{"o": {"k": 5}}`, "refused at $.o"},
		{"key", `{"k": 5}`, "refused at $"},
		{"remove", `{"o": {"n": null}}`, "refused at $.o.n"},
		{"remove", `{"o": {"n": 7}}`, ""},
		{"replace", `{"x y": 4}`, `refused at $["x y"]`},
		{"replace", `{"x y": null}`, ""},
		{"set", `{"new": 1}`, "refused at $.new"},
		{"set", `{"o": {"n": 1}}`, "refused at $.o.n"},
		{"set", `{"o": {"n": null}}`, ""},
	}
	for _, tt := range tests {
		_, err := MergePatch([]byte(target), []byte(tt.patch), "$", tt.guard)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("guard %s, patch %s: err = %q, want %q", tt.guard, tt.patch, got, tt.want)
		}
	}
}

// TestChildPath: identifiers follow a dot, other keys are quoted.
func TestChildPath(t *testing.T) {
	for key, want := range map[string]string{
		"a": "$.a", "_x9": "$._x9", "9a": `$["9a"]`, "": `$[""]`, "a.b": `$["a.b"]`, `k"q`: `$["k\"q"]`, "é": `$["é"]`,
	} {
		if got := ChildPath("$", key); got != want {
			t.Errorf("ChildPath($, %q) = %s, want %s", key, got, want)
		}
	}
}

// TestMergePatchLoneSurrogateKey: a target key holding a lone surrogate
// escape decodes as U+FFFD, as do "\ufffd" and every other lone
// surrogate: which patch key means it is not known, so a patch key that
// matches it is refused; a surrogate pair is an ordinary character.
func TestMergePatchLoneSurrogateKey(t *testing.T) {
	tests := []struct {
		target, patch, want, err string
	}{
		{`{"k\ud800": 1}`, `{"k\ufffd": 2}`, "", `the key at $["k` + "\ufffd" + `"] holds \ud800, a lone UTF-16 surrogate: no patch key can be matched with it exactly`},
		{`{"\udc00": 1}`, `{"\udc01": null}`, "", `holds \udc00, a lone UTF-16 surrogate`},
		{`{"k\ud800": 1}`, `{"other": 2}`, `{"k\ud800": 1, "other": 2}`, ""},
		{`{"k\ud83d\ude00": 1}`, `{"k😀": 2}`, `{"k\ud83d\ude00": 2}`, ""},
	}
	for _, tt := range tests {
		got, err := MergePatch([]byte(tt.target), []byte(tt.patch), "$", anyPatch{})
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("MergePatch(%s, %s) = %s, %v; want error %q", tt.target, tt.patch, got, err, tt.err)
			}
		case err != nil || string(got) != tt.want:
			t.Errorf("MergePatch(%s, %s) = %s, %v; want %s", tt.target, tt.patch, got, err, tt.want)
		}
	}
}

func TestLoneSurrogate(t *testing.T) {
	for quoted, want := range map[string]string{
		`"a"`: "", `"\ud83d\ude00"`: "", `"\ud800"`: `\ud800`, `"x\udfffy"`: `\udfff`, `"\ud800\u0041"`: `\ud800`,
		`"\\ud800"`: "", `"\uD800"`: `\uD800`, `"\ud83d\ude00\udc00"`: `\udc00`,
	} {
		got, ok := LoneSurrogate([]byte(quoted))
		if got != want || ok != (want != "") {
			t.Errorf("LoneSurrogate(%s) = %q, %v; want %q", quoted, got, ok, want)
		}
	}
}
