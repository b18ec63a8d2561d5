package snapshot

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestBadInput checks that every kind of bad input gives an error naming
// the file, the JSON path and what was expected; none panics.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name, in, want string
		syntax         bool // a *SyntaxError, else a *ModelError
		line, col      int
	}{
		{"invalid JSON", "{\n  \"Objects\": [1,\n   2 x]}",
			`m.json:3:6: invalid JSON at $.Objects[1]: unexpected 'x' in an array; expected ',' or ']'`, true, 3, 6},
		{"invalid JSON after CRLF and tabs", "{\r\n\t\"Objects\": {\r\n\t\t\"a\": tru}}",
			`m.json:3:8: invalid JSON at $.Objects.a: unexpected 't'; expected true`, true, 3, 8},
		{"missing colon", `{"Objects" null}`, `m.json:1:12: invalid JSON at $: unexpected 'n' after a key; expected ':'`, true, 1, 12},
		{"unquoted key", `{"Objects": {a: 1}}`, `m.json:1:14: invalid JSON at $.Objects: unexpected 'a'; expected a string key`, true, 1, 14},
		{"missing colon after a leading space", `  {"Objects" null}`, `m.json:1:14: invalid JSON at $: unexpected 'n' after a key; expected ':'`, true, 1, 14},
		{"second key without colon", `{"Objects": {"x": {"a": 1, "b" 2}}}`, `m.json:1:32: invalid JSON at $.Objects.x: unexpected '2' after a key; expected ':'`, true, 1, 32},
		{"header key without colon", `{"Objects": {"?": {"id": "a", "type" 1}}}`, `m.json:1:38: invalid JSON at $.Objects["?"]: unexpected '1' after a key; expected ':'`, true, 1, 38},
		{"record key without colon", `{"Objects": {"?": {"dependencies": {"onDestruction": [{"subscriber" 1}]}}}}`, `m.json:1:69: invalid JSON at $.Objects["?"].dependencies.onDestruction[0]: unexpected '1' after a key; expected ':'`, true, 1, 69},
		{"trailing comma", `{"Objects": [1,]}`, `m.json:1:16: invalid JSON at $.Objects[1]: unexpected ']'; expected a value`, true, 1, 16},
		{"bad number", `{"Objects": [-]}`, `m.json:1:15: invalid JSON at $.Objects[0]: unexpected ']' in a number; expected a digit`, true, 1, 15},
		{"bad fraction", `{"Objects": [1.]}`, `m.json:1:16: invalid JSON at $.Objects[0]: unexpected ']' after a decimal point; expected a digit`, true, 1, 16},
		{"bad exponent", `{"Objects": [1e+]}`, `m.json:1:17: invalid JSON at $.Objects[0]: unexpected ']' in an exponent; expected a digit`, true, 1, 17},
		{"leading zero", `{"Objects": [01]}`, `m.json:1:15: invalid JSON at $.Objects[0]: unexpected '1' in an array; expected ',' or ']'`, true, 1, 15},
		{"header not an object", `{"Objects": {"?": 5}}`, `m.json: $.Objects["?"]: the header must be a JSON object`, false, 0, 0},
		{"header an array", `{"Objects": [{"a": 1}, {"?": ["id"]}]}`, `m.json: $.Objects[1]["?"]: the header must be a JSON object`, false, 0, 0},
		{"header a string", `{"Objects": {"?": "x"}}`, `m.json: $.Objects["?"]: the header must be a JSON object`, false, 0, 0},
		{"header null", `{"Objects": {"?": null}}`, `m.json: $.Objects["?"]: the header must be a JSON object`, false, 0, 0},
		{"two headers", `{"Objects": {"?": {"id": "a"}, "?": {"id": "b"}}}`, `m.json: $.Objects["?"]: duplicate "?" key: an object has one header`, false, 0, 0},
		{"id a number", `{"Objects": {"?": {"id": 5}}}`, `m.json: $.Objects["?"].id: the id must be a string`, false, 0, 0},
		{"id an object", `{"Objects": {"?": {"id": {"a": 1}}}}`, `m.json: $.Objects["?"].id: the id must be a string`, false, 0, 0},
		{"id true", `{"ObjectsCopy": {"k": [{"?": {"id": true}}]}}`, `m.json: $.ObjectsCopy.k[0]["?"].id: the id must be a string`, false, 0, 0},
		{"empty id", `{"Objects": {"?": {"id": ""}}}`, `m.json: $.Objects["?"].id: the id must be a non-empty string`, false, 0, 0},
		{"type with a space", `{"Objects": {"a": [{"?": {"id": "x", "type": "a b"}}]}}`,
			`m.json: $.Objects.a[0]["?"].type: type "a b" does not parse; expected name[/version][@package]`, false, 0, 0},
		{"type with an empty version", `{"Objects": {"?": {"id": "x", "type": "x/@p"}}}`,
			`m.json: $.Objects["?"].type: type "x/@p" does not parse; expected name[/version][@package]`, false, 0, 0},
		{"type with an empty package", `{"Objects": {"?": {"type": "x@", "id": "x"}}}`,
			`m.json: $.Objects["?"].type: type "x@" does not parse; expected name[/version][@package]`, false, 0, 0},
		{"type without a name", `{"Objects": {"?": {"id": "x", "type": "@p"}}}`,
			`m.json: $.Objects["?"].type: type "@p" does not parse; expected name[/version][@package]`, false, 0, 0},
		{"type with two packages", `{"Objects": {"?": {"id": "x", "type": "a/1@b@c"}}}`,
			`m.json: $.Objects["?"].type: type "a/1@b@c" does not parse; expected name[/version][@package]`, false, 0, 0},
		{"type a number", `{"Objects": {"?": {"id": "x", "type": 7}}}`, `m.json: $.Objects["?"].type: the type must be a string`, false, 0, 0},
		{"type an array", `{"Objects": {"?": {"id": "x", "type": ["T"]}}}`, `m.json: $.Objects["?"].type: the type must be a string`, false, 0, 0},
		{"classVersion a number", `{"Objects": {"?": {"id": "x", "type": "T", "classVersion": 1}}}`, `m.json: $.Objects["?"].classVersion: classVersion must be a string`, false, 0, 0},
		{"package an object", `{"Objects": {"?": {"id": "x", "type": "T", "package": {}}}}`, `m.json: $.Objects["?"].package: package must be a string`, false, 0, 0},
		{"destroyed a string", `{"Objects": {"?": {"id": "x", "destroyed": "yes"}}}`, `m.json: $.Objects["?"].destroyed: destroyed must be true or false`, false, 0, 0},
		{"destroyed a number", `{"Objects": {"?": {"id": "x", "destroyed": 1}}}`, `m.json: $.Objects["?"].destroyed: destroyed must be true or false`, false, 0, 0},
		{"dependencies an array", `{"Objects": {"?": {"id": "x", "dependencies": []}}}`,
			`m.json: $.Objects["?"].dependencies: dependencies must be a JSON object like {"onDestruction": [...]}`, false, 0, 0},
		{"onDestruction an object", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": {}}}}}`,
			`m.json: $.Objects["?"].dependencies.onDestruction: onDestruction must be an array of {"subscriber": ID, "handler": NAME or null}`, false, 0, 0},
		{"record a number", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [5]}}}}`,
			`m.json: $.Objects["?"].dependencies.onDestruction[0]: an onDestruction record must be a JSON object {"subscriber": ID, "handler": NAME or null}`, false, 0, 0},
		{"record without subscriber", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [{"subscriber": "y"}, {"handler": "h"}]}}}}`,
			`m.json: $.Objects["?"].dependencies.onDestruction[1]: an onDestruction record needs a "subscriber" id`, false, 0, 0},
		{"empty subscriber", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [{"subscriber": ""}]}}}}`,
			`m.json: $.Objects["?"].dependencies.onDestruction[0].subscriber: the subscriber must be an object id (a non-empty string)`, false, 0, 0},
		{"empty type", `{"Objects": {"?": {"id": "x", "type": ""}}}`,
			`m.json: $.Objects["?"].type: type "" does not parse; expected name[/version][@package]`, false, 0, 0},
		{"null subscriber", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [{"subscriber": null}]}}}}`,
			`m.json: $.Objects["?"].dependencies.onDestruction[0].subscriber: the subscriber must be an object id (a non-empty string)`, false, 0, 0},
		{"subscriber a number", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [{"subscriber": 1}]}}}}`,
			`m.json: $.Objects["?"].dependencies.onDestruction[0].subscriber: the subscriber must be a string`, false, 0, 0},
		{"handler a number", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [{"subscriber": "y", "handler": 3}]}}}}`,
			`m.json: $.Objects["?"].dependencies.onDestruction[0].handler: the handler must be a string`, false, 0, 0},
		{"envelope with only Attributes", `{"Attributes": []}`,
			`m.json: $: an envelope needs "Objects" or "ObjectsCopy" (either may be null); found only "Attributes"`, false, 0, 0},
		{"task without Objects and ObjectsCopy", `{"model": {"Attributes": []}, "action": {}}`,
			`m.json: $.model: an engine task's model must be an envelope with "Objects" or "ObjectsCopy"`, false, 0, 0},
		{"Objects a string", `{"Objects": "x"}`, `m.json: $.Objects: expected an object tree (a JSON object or array) or null`, false, 0, 0},
		{"ObjectsCopy a number", `{"Objects": null, "ObjectsCopy": 1}`, `m.json: $.ObjectsCopy: expected an object tree (a JSON object or array) or null`, false, 0, 0},
		{"task Objects true", `{"model": {"Objects": true}}`, `m.json: $.model.Objects: expected an object tree (a JSON object or array) or null`, false, 0, 0},
		{"empty input", ``, `m.json:1:1: invalid JSON at $: the input is empty; expected a JSON object or array`, true, 1, 1},
		{"white space only", "  \n\t ", `m.json:2:3: invalid JSON at $: the input is empty; expected a JSON object or array`, true, 2, 3},
		{"trailing garbage", `{"Objects": null} x`, `m.json:1:19: invalid JSON at $: unexpected 'x' after the top-level value`, true, 1, 19},
		{"two values", "{\"Objects\": null}\n{}", `m.json:2:1: invalid JSON at $: unexpected '{' after the top-level value`, true, 2, 1},
		{"trailing NUL", "{\"Objects\": null}\x00", `m.json:1:18: invalid JSON at $: unexpected byte 0x00 after the top-level value`, true, 1, 18},
		{"tab in a string", "{\"Objects\": \"a\tb\"}", `m.json:1:15: invalid JSON at $.Objects: control character 0x09 in a string; it must be escaped`, true, 1, 15},
		{"newline in a key", "{\"Obj\nects\": 1}", `m.json:1:6: invalid JSON at $: control character 0x0a in a string; it must be escaped`, true, 1, 6},
		{"bad escape", `{"Objects": "a\qb"}`, `m.json:1:15: invalid JSON at $.Objects: invalid escape \q in a string`, true, 1, 15},
		{"bad unicode escape", `{"Objects": "a\u12G4"}`, `m.json:1:15: invalid JSON at $.Objects: invalid \u escape in a string; expected four hex digits`, true, 1, 15},
		{"short unicode escape", `{"Objects": "\u12"}`, `m.json:1:14: invalid JSON at $.Objects: invalid \u escape in a string; expected four hex digits`, true, 1, 14},
		{"unterminated string", `{"Objects": "abc`, `m.json:1:17: invalid JSON at $.Objects: unexpected end of input in a string; expected '"'`, true, 1, 17},
		{"escape at the end", `{"Objects": "abc\`, `m.json:1:18: invalid JSON at $.Objects: unexpected end of input in a string escape`, true, 1, 18},
		{"truncated object", `{"Objects": {"a": 1`, `m.json:1:20: invalid JSON at $.Objects.a: unexpected end of input in an object; expected ',' or '}'`, true, 1, 20},
		{"truncated header", `{"Objects": {"?": {"id": "a"`, `m.json:1:29: invalid JSON at $.Objects["?"].id: unexpected end of input in an object; expected ',' or '}'`, true, 1, 29},
		{"bad literal", `{"Objects": nul}`, `m.json:1:13: invalid JSON at $.Objects: unexpected 'n'; expected null`, true, 1, 13},
		{"bad literal in a header", `{"Objects": {"?": {"id": nil}}}`, `m.json:1:26: invalid JSON at $.Objects["?"].id: unexpected 'n'; expected null`, true, 1, 26},
		{"bad destroyed literal", `{"Objects": {"?": {"destroyed": tru}}}`, `m.json:1:33: invalid JSON at $.Objects["?"].destroyed: unexpected 't'; expected true`, true, 1, 33},
		{"not JSON at all", `<html>`, `m.json:1:1: invalid JSON at $: unexpected '<'; expected a value`, true, 1, 1},
		{"a BOM", "\ufeff{}", `m.json:1:1: invalid JSON at $: the file starts with a UTF-8 byte-order mark (bytes EF BB BF); remove it: JSON text must not begin with one (RFC 8259 section 8.1) and Murano's engine refuses it`, true, 1, 1},
		{"multi-byte column", "{\"é\": x}", `m.json:1:8: invalid JSON at $["é"]: unexpected 'x'; expected a value`, true, 1, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, load := range loaders {
				if load.name == "LoadGraph" && tt.name == "ObjectsCopy a number" {
					continue // LoadGraph reads only Objects
				}
				err := load.fn(doc(tt.in))
				if err == nil {
					t.Fatalf("%s: no error", load.name)
				}
				if err.Error() != tt.want {
					t.Errorf("%s:\n got %s\nwant %s", load.name, err, tt.want)
				}
				var se *SyntaxError
				var me *ModelError
				switch {
				case tt.syntax && errors.As(err, &se):
					if se.Line != tt.line || se.Column != tt.col || se.File != "m.json" || se.Offset < 0 || se.Offset > len(tt.in) {
						t.Errorf("%s: %s offset %d line %d column %d, want %d %d", load.name, se.File, se.Offset, se.Line, se.Column, tt.line, tt.col)
					}
				case !tt.syntax && errors.As(err, &me):
					if me.File != "m.json" || !strings.HasPrefix(me.Path, "$") {
						t.Errorf("%s: file %q path %q", load.name, me.File, me.Path)
					}
				default:
					t.Errorf("%s: error %T, want syntax=%v", load.name, err, tt.syntax)
				}
			}
		})
	}
}

func TestDeepNesting(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("[", 100000),
		strings.Repeat("[", 100000) + strings.Repeat("]", 100000),
		`{"Objects": ` + strings.Repeat(`{"a": `, 100000),
		`{"Objects": {"?": {"id": "x", "metadata": ` + strings.Repeat(`[`, 100000) + `}}}`,
		`{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [{"subscriber": "y", "extra": ` + strings.Repeat(`{"a": `, 100000) + `}]}}}}`,
	} {
		for _, load := range loaders {
			err := load.fn(doc(in))
			var me *ModelError
			if !errors.As(err, &me) || me.File != "m.json" || !strings.HasPrefix(me.Path, "$") ||
				me.Msg != "nesting deeper than 1000 levels; a Murano model nests far less" {
				t.Fatalf("%s(%.30s...) = %v", load.name, in, err)
			}
			// Deep paths keep their first and last segments.
			if len(me.Path) > 400 || !strings.Contains(me.Path, "...") {
				t.Errorf("path %q", me.Path)
			}
		}
	}
	// MaxDepth levels are fine: arrays, the object and its header.
	in := strings.Repeat("[", MaxDepth-2) + `{"?": {"id": "deep"}}` + strings.Repeat("]", MaxDepth-2)
	tr, err := LoadSnapshot(doc(in))
	if err != nil {
		t.Fatal(err)
	}
	if i, ok := tr.Lookup("deep"); !ok || !strings.HasPrefix(tr.ObjectPath(i), "$[0][0]") || !strings.Contains(tr.ObjectPath(i), "...") {
		t.Errorf("deep object: %v", tr.ObjectPath(i))
	}
}

// TestHugeString reads a 100 MiB JSON string as the whole input: it is
// rejected once the one pass over it is done, without copying it.
func TestHugeString(t *testing.T) {
	data := make([]byte, 100<<20)
	data[0] = 'a'
	for n := 1; n < len(data); n *= 2 {
		copy(data[n:], data[:n])
	}
	data[0], data[len(data)-1] = '"', '"'
	d := NewDocument("big.json", data)
	const want = "big.json: $: expected an object tree (a JSON object or array) or null"
	if _, err := LoadSnapshot(d); err == nil || err.Error() != want {
		t.Errorf("LoadSnapshot: %v", err)
	}
	if _, _, err := LoadModel(d); err == nil || !strings.HasPrefix(err.Error(), "big.json: $: expected a Murano envelope") {
		t.Errorf("LoadModel: %v", err)
	}
	// Unterminated, it is a syntax error at the end of the input.
	data[len(data)-1] = 'a'
	_, err := LoadSnapshot(d)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Offset != len(data) || se.Line != 1 || se.Column != len(data)+1 {
		t.Errorf("unterminated: %v", err)
	}
}

// TestTruncated loads every prefix of a real model: each must fail with
// an error naming the file, none may panic.
func TestTruncated(t *testing.T) {
	full := readModel(t, "environments-model-response.json").Data
	for n := 0; n < len(full); n++ {
		d := NewDocument("env.json", full[:n])
		for _, load := range loaders {
			err := load.fn(d)
			if err == nil {
				if json.Valid(full[:n]) {
					continue // all but the final newline
				}
				t.Fatalf("%s: prefix of %d bytes loaded", load.name, n)
			}
			if !strings.HasPrefix(err.Error(), "env.json:") {
				t.Fatalf("%s: prefix of %d bytes: %v", load.name, n, err)
			}
		}
	}
	// Same for an envelope and an engine task.
	for _, name := range []string{"../testdata/pairs/task-region-removed.json", "../testdata/pairs/region-removed-handlers.json"} {
		d, err := ReadDocument(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < len(d.Data); n += 7 {
			if _, _, err := LoadModel(NewDocument("p.json", d.Data[:n])); err == nil || !strings.HasPrefix(err.Error(), "p.json:") {
				t.Fatalf("%s: prefix of %d bytes: %v", name, n, err)
			}
		}
	}
}
