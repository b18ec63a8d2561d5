package jsonedit

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// oracleMergePatch applies patch, an RFC 7386 JSON Merge Patch, to doc and
// returns the patched document: members of a patch object replace those of
// the target, a null member removes one, nested objects merge recursively
// (a target that is not an object counts as {}), and any other patch value
// (an array, a string, null) replaces the target as a whole, verbatim.
// Both inputs must be valid JSON. The output is compact JSON; the members
// of doc keep their order and new members follow in the patch's order.
//
// The merge itself is github.com/evanphx/json-patch/v5's. Around it,
// oracleMergePatch restores RFC 7386 where that library departs from it: it
// drops null members of objects inside a patch array when the target
// member is not an object, rejects a target that is null, and escapes
// <, > and & in every string.
//
// It is the reference MergePatch is checked against: a second, independent
// implementation of the RFC, test-only since production keeps the bytes
// of the target that MergePatch does.
func oracleMergePatch(doc, patch []byte) ([]byte, error) {
	if !json.Valid(doc) {
		return nil, errors.New("applying merge patch: target is not valid JSON")
	}
	if !json.Valid(patch) {
		return nil, errors.New("applying merge patch: patch is not valid JSON")
	}
	patch = bytes.Trim(patch, jsonSpace)
	if patch[0] != '{' {
		return compact(patch)
	}
	if d := bytes.Trim(doc, jsonSpace); d[0] != '{' {
		doc = []byte("{}")
	}
	// Arrays in the patch replace their target verbatim: hide each one
	// from the library behind a placeholder string and put it back after.
	mark, err := placeholderPrefix(doc)
	if err != nil {
		return nil, err
	}
	var arrays [][]byte
	patch, err = hideArrays(patch, mark, &arrays)
	if err != nil {
		return nil, fmt.Errorf("applying merge patch: %w", err)
	}
	out, err := jsonpatch.MergePatch(doc, patch)
	if err != nil {
		return nil, fmt.Errorf("applying merge patch: %w", err)
	}
	out = unescapeHTML(out)
	for i, a := range arrays {
		out = bytes.Replace(out, []byte(`"`+mark+strconv.Itoa(i)+`"`), a, 1)
	}
	return out, nil
}

const jsonSpace = " \t\r\n"

func compact(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, fmt.Errorf("applying merge patch: %w", err)
	}
	return buf.Bytes(), nil
}

// placeholderPrefix returns a string that occurs nowhere in doc.
func placeholderPrefix(doc []byte) (string, error) {
	var nonce [12]byte
	for {
		if _, err := rand.Read(nonce[:]); err != nil {
			return "", fmt.Errorf("applying merge patch: %w", err)
		}
		mark := "objgc-array-" + hex.EncodeToString(nonce[:]) + "-"
		if !bytes.Contains(doc, []byte(mark)) {
			return mark, nil
		}
	}
}

// hideArrays rewrites the patch object obj, replacing every array reached
// through object members with the string mark+N, where arrays[N] is the
// array, compacted. Member order is kept.
func hideArrays(obj []byte, mark string, arrays *[][]byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for i := 0; dec.More(); i++ {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		switch val[0] {
		case '{':
			if val, err = hideArrays(val, mark, arrays); err != nil {
				return nil, err
			}
		case '[':
			a, err := compact(val)
			if err != nil {
				return nil, err
			}
			*arrays = append(*arrays, a)
			val = json.RawMessage(`"` + mark + strconv.Itoa(len(*arrays)-1) + `"`)
		}
		if i > 0 {
			out.WriteByte(',')
		}
		k, err := json.Marshal(key)
		if err != nil {
			return nil, err
		}
		out.Write(k)
		out.WriteByte(':')
		out.Write(val)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// unescapeHTML turns the \u003c, \u003e and \u0026 escapes that Go's JSON
// encoder writes for <, > and & back into the characters, so that patched
// strings read as the hook wrote them. b is valid compact JSON.
func unescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			out = append(out, c)
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "003c", "003C":
				out = append(out, '<')
				i += 5
				continue
			case "003e", "003E":
				out = append(out, '>')
				i += 5
				continue
			case "0026":
				out = append(out, '&')
				i += 5
				continue
			}
		}
		// Any other escape is copied whole, so that the backslash of
		// \\ is never taken for the start of an escape.
		out = append(out, c, b[i+1])
		i++
	}
	return out
}

// TestOracle checks the oracle itself on every example of RFC 7386.
func TestOracle(t *testing.T) {
	for _, tc := range []struct{ doc, patch, want string }{
		// RFC 7386 Appendix A, every example.
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a": {"b": "c"}}`, `{"a": {"b": "d", "c": null}}`, `{"a":{"b":"d"}}`},
		{`{"a": [{"b":"c"}]}`, `{"a": [1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"e":null,"a":1}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
		// The RFC 7386 section 3 example.
		{`{"title": "Goodbye!", "author": {"givenName": "John", "familyName": "Doe"}, "tags": ["example", "sample"], "content": "This will be unchanged"}`,
			`{"title": "Hello!", "phoneNumber": "+01-123-456-7890", "author": {"familyName": null}, "tags": ["example"]}`,
			`{"title":"Hello!","author":{"givenName":"John"},"tags":["example"],"content":"This will be unchanged","phoneNumber":"+01-123-456-7890"}`},

		// Where github.com/evanphx/json-patch/v5 alone departs from the RFC:
		// nulls inside a patch array are values, not deletions...
		{`{"a":1}`, `{"a":[{"b":null},null]}`, `{"a":[{"b":null},null]}`},
		{`{}`, `{"x":{"a":[{"b":null}]}}`, `{"x":{"a":[{"b":null}]}}`},
		{`[1]`, `[{"b":null}]`, `[{"b":null}]`},
		// ... a target that is not an object counts as {} ...
		{`null`, `{"a":1,"b":null}`, `{"a":1}`},
		{`"s"`, `{"a":1}`, `{"a":1}`},
		// ... and strings are not HTML-escaped.
		{`{"a":"<b>&amp;</b>","c":"\\u003c"}`, `{"d":"x<y"}`, `{"a":"<b>&amp;</b>","c":"\\u003c","d":"x<y"}`},

		// A Murano subscriber: member order kept, big numbers and designer
		// attributes untouched, new members after.
		{`{"?": {"id": "s1", "type": "com.example.App", "_26411a": {"name": "App"}}, "instance": "i1", "n": 12345678901234567890}`,
			`{"instance": null, "status": "ok"}`,
			`{"?":{"id":"s1","type":"com.example.App","_26411a":{"name":"App"}},"n":12345678901234567890,"status":"ok"}`},
	} {
		got, err := oracleMergePatch([]byte(tc.doc), []byte(tc.patch))
		if err != nil {
			t.Errorf("oracleMergePatch(%s, %s): %v", tc.doc, tc.patch, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("oracleMergePatch(%s, %s)\n = %s\nwant %s", tc.doc, tc.patch, got, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("oracleMergePatch(%s, %s) = %s: not valid JSON", tc.doc, tc.patch, got)
		}
	}
}

func TestOracleInvalid(t *testing.T) {
	for _, tc := range []struct{ doc, patch string }{
		{`{"a":`, `{}`},
		{`{}`, `{"a":}`},
		{`{} {}`, `{}`},
		{``, `{}`},
		{`{}`, ``},
	} {
		if got, err := oracleMergePatch([]byte(tc.doc), []byte(tc.patch)); err == nil {
			t.Errorf("oracleMergePatch(%q, %q) = %s, want an error", tc.doc, tc.patch, got)
		}
	}
}
