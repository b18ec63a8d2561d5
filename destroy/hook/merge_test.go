package hook

import (
	"encoding/json"
	"testing"
)

func TestMergePatch(t *testing.T) {
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
		got, err := MergePatch([]byte(tc.doc), []byte(tc.patch))
		if err != nil {
			t.Errorf("MergePatch(%s, %s): %v", tc.doc, tc.patch, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("MergePatch(%s, %s)\n = %s\nwant %s", tc.doc, tc.patch, got, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("MergePatch(%s, %s) = %s: not valid JSON", tc.doc, tc.patch, got)
		}
	}
}

func TestMergePatchInvalid(t *testing.T) {
	for _, tc := range []struct{ doc, patch string }{
		{`{"a":`, `{}`},
		{`{}`, `{"a":}`},
		{`{} {}`, `{}`},
		{``, `{}`},
		{`{}`, ``},
	} {
		if got, err := MergePatch([]byte(tc.doc), []byte(tc.patch)); err == nil {
			t.Errorf("MergePatch(%q, %q) = %s, want an error", tc.doc, tc.patch, got)
		}
	}
}

func TestDocumentMarshal(t *testing.T) {
	b, err := Document{Event: EventNotify, Object: json.RawMessage(`{"?": {"id": "o"}}`),
		Subscriber: json.RawMessage(`{"?": {"id": "s"}}`)}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"event":"notify","object":{"?":{"id":"o"}},"owner_id":null,"subscriber":{"?":{"id":"s"}}}`; string(b) != want {
		t.Errorf("Marshal = %s, want %s", b, want)
	}
}
