package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestInvalidUTF8 checks RFC 8259 section 8.1: a text that is not UTF-8
// anywhere, inside a string included, is refused with its line, column and
// JSON path. encoding/json would read each of these as U+FFFD and so write
// back, compare and hand to hooks a different string than the file holds.
func TestInvalidUTF8(t *testing.T) {
	tests := []struct {
		name, in, want string
		line, col      int
	}{
		{"stray byte in a property", "{\"Objects\": {\"a\": \"x\xffy\"}}",
			`m.json:1:21: invalid JSON at $.Objects.a: invalid UTF-8 (bytes ff) in a string; a JSON text must be UTF-8 (RFC 8259 section 8.1): no stray bytes, overlong forms or encoded surrogates`, 1, 21},
		{"stray byte in an id", "{\"Objects\": {\"?\": {\"id\": \"vm-\xff\"}}}",
			`m.json:1:30: invalid JSON at $.Objects["?"].id: invalid UTF-8 (bytes ff) in a string; a JSON text must be UTF-8 (RFC 8259 section 8.1): no stray bytes, overlong forms or encoded surrogates`, 1, 30},
		{"overlong slash in a key", "{\"Objects\": {\"a\xc0\xaf\": 1}}",
			`m.json:1:16: invalid JSON at $.Objects: invalid UTF-8 (bytes c0 af) in a string; a JSON text must be UTF-8 (RFC 8259 section 8.1): no stray bytes, overlong forms or encoded surrogates`, 1, 16},
		{"overlong NUL in a handler", "{\"Objects\": {\"?\": {\"id\": \"x\", \"dependencies\": {\"onDestruction\": [{\"subscriber\": \"y\", \"handler\": \"h\xc0\x80\"}]}}}}",
			`m.json:1:99: invalid JSON at $.Objects["?"].dependencies.onDestruction[0].handler: invalid UTF-8 (bytes c0 80) in a string; a JSON text must be UTF-8 (RFC 8259 section 8.1): no stray bytes, overlong forms or encoded surrogates`, 1, 99},
		{"three-byte overlong", "{\"Objects\": [\"\xe0\x80\xaf\"]}",
			`m.json:1:15: invalid JSON at $.Objects[0]: invalid UTF-8 (bytes e0 80 af) in a string; a JSON text must be UTF-8 (RFC 8259 section 8.1): no stray bytes, overlong forms or encoded surrogates`, 1, 15},
		{"surrogate encoded in UTF-8", "{\"Objects\": [\"ok\",\n \"vm-\xed\xa0\x80\"]}",
			`m.json:2:6: invalid JSON at $.Objects[1]: invalid UTF-8 (bytes ed a0 80) in a string; a JSON text must be UTF-8 (RFC 8259 section 8.1): no stray bytes, overlong forms or encoded surrogates`, 2, 6},
		{"beyond U+10FFFF", "{\"Objects\": [\"\xf4\x90\x80\x80\"]}",
			`m.json:1:15: invalid JSON at $.Objects[0]: invalid UTF-8 (bytes f4 90 80 80) in a string; a JSON text must be UTF-8 (RFC 8259 section 8.1): no stray bytes, overlong forms or encoded surrogates`, 1, 15},
		{"truncated sequence at the quote", "{\"Objects\": [\"\xc3\"]}",
			`m.json:1:15: invalid JSON at $.Objects[0]: invalid UTF-8 (bytes c3) in a string; a JSON text must be UTF-8 (RFC 8259 section 8.1): no stray bytes, overlong forms or encoded surrogates`, 1, 15},
		{"Latin-1 after valid text", "{\"Objects\": [\"caf\xc3\xa9 caf\xe9\"]}",
			`m.json:1:24: invalid JSON at $.Objects[0]: invalid UTF-8 (bytes e9) in a string; a JSON text must be UTF-8 (RFC 8259 section 8.1): no stray bytes, overlong forms or encoded surrogates`, 1, 24},
		{"long ASCII run, then a bad byte", "{\"Objects\": [\"" + strings.Repeat("a", 40) + "\x80\"]}",
			`m.json:1:55: invalid JSON at $.Objects[0]: invalid UTF-8 (bytes 80) in a string; a JSON text must be UTF-8 (RFC 8259 section 8.1): no stray bytes, overlong forms or encoded surrogates`, 1, 55},
		{"in a header value objgc does not read", "{\"Objects\": {\"?\": {\"id\": \"x\", \"name\": \"\xfe\"}}}",
			`m.json:1:40: invalid JSON at $.Objects["?"].name: invalid UTF-8 (bytes fe) in a string; a JSON text must be UTF-8 (RFC 8259 section 8.1): no stray bytes, overlong forms or encoded surrogates`, 1, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, load := range loaders {
				err := load.fn(doc(tt.in))
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("%s: error %v (%T); want a *SyntaxError", load.name, err, err)
				}
				if err.Error() != tt.want {
					t.Errorf("%s:\n got %s\nwant %s", load.name, err, tt.want)
				}
				if se.Line != tt.line || se.Column != tt.col {
					t.Errorf("%s: line %d column %d; want %d %d", load.name, se.Line, se.Column, tt.line, tt.col)
				}
			}
		})
	}
}

// TestValidUTF8Accepted: every valid form, ASCII runs around multi-byte
// runes, 2-, 3- and 4-byte runes at the end of a string, is read as is.
func TestValidUTF8Accepted(t *testing.T) {
	for _, s := range []string{"é", "vm-é", "日本語の名前", "🙂", "a🙂b", strings.Repeat("ж", 9) + strings.Repeat("x", 9), "\u2028", "\uFFFD", "\U0010FFFF", "x\u202ey"} {
		in := fmt.Sprintf(`{"Objects": {"?": {"id": "%s"}, "ref": "%s"}}`, s, s)
		_, inc, err := LoadModel(doc(in))
		if err != nil {
			t.Errorf("%q: %v", s, err)
			continue
		}
		if inc.ID(0) != s {
			t.Errorf("id %q read as %q", s, inc.ID(0))
		}
	}
}

// headerFields are the header strings objgc hands on: each is refused when
// it cannot be carried exactly to every consumer.
var headerFields = []struct {
	name, format, path string
}{
	{"id", `{"Objects": {"?": {"id": "%s"}}}`, `$.Objects["?"].id`},
	{"type version", `{"Objects": {"?": {"id": "x", "type": "a.B/%s@p"}}}`, `$.Objects["?"].type`},
	{"classVersion", `{"Objects": {"?": {"id": "x", "type": "a.B", "classVersion": "%s"}}}`, `$.Objects["?"].classVersion`},
	{"package", `{"Objects": {"?": {"id": "x", "type": "a.B", "package": "%s"}}}`, `$.Objects["?"].package`},
	{"subscriber", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [{"subscriber": "%s", "handler": null}]}}}}`, `$.Objects["?"].dependencies.onDestruction[0].subscriber`},
	{"handler", `{"Objects": {"?": {"id": "x", "dependencies": {"onDestruction": [{"subscriber": "y", "handler": "%s"}]}}}}`, `$.Objects["?"].dependencies.onDestruction[0].handler`},
}

// TestHostileHeaderStrings: control characters (escaped, or raw DEL and
// C1) and lone surrogate escapes in any header string objgc hands on are
// refused with the JSON path of the string.
func TestHostileHeaderStrings(t *testing.T) {
	values := []struct {
		name, json, want string
	}{
		{"ESC", `a\u001b[2J`, "control character U+001B"},
		{"OSC", `a\u001b]0;x\u0007`, "control character U+001B"},
		{"BEL", `a\u0007`, "control character U+0007"},
		{"CR", `app1\rroot`, "control character U+000D"},
		{"LF", `app1\nroot`, "control character U+000A"},
		{"escaped LF as \\u", `app1\u000Aroot`, "control character U+000A"},
		{"NUL", `a\u0000b`, "control character U+0000"},
		{"tab", `a\tb`, "control character U+0009"},
		{"escaped DEL", `a\u007f`, "control character U+007F"},
		{"raw DEL", "a\x7f", "control character U+007F"},
		{"escaped C1 CSI", `a\u009b2J`, "control character U+009B"},
		{"raw C1 CSI", "a\u009b2J", "control character U+009B"},
		{"raw C1 NEL", "a\u0085", "control character U+0085"},
		{"raw C1 APC, last of C1", "a\u009f", "control character U+009F"},
		{"lone high surrogate", `vm-\ud800`, `holds \ud800, a lone UTF-16 surrogate`},
		{"lone low surrogate", `vm-\udc00`, `holds \udc00, a lone UTF-16 surrogate`},
		{"high then text", `\uD800x`, `holds \uD800, a lone UTF-16 surrogate`},
		{"high then high", `\ud800\ud800`, `holds \ud800, a lone UTF-16 surrogate`},
		{"pair reversed", `\udc00\ud800`, `holds \udc00, a lone UTF-16 surrogate`},
		{"high then non-surrogate escape", `\ud800\u0041`, `holds \ud800, a lone UTF-16 surrogate`},
		{"pair then lone", `\ud83d\ude00\udfff`, `holds \udfff, a lone UTF-16 surrogate`},
		{"after an escaped backslash", `\\\ud800`, `holds \ud800, a lone UTF-16 surrogate`},
	}
	for _, f := range headerFields {
		for _, v := range values {
			t.Run(f.name+"/"+v.name, func(t *testing.T) {
				in := fmt.Sprintf(f.format, v.json)
				for _, load := range loaders {
					err := load.fn(doc(in))
					var me *ModelError
					if !errors.As(err, &me) {
						t.Fatalf("%s: %s: error %v (%T); want a *ModelError", load.name, in, err, err)
					}
					if me.Path != f.path || !strings.Contains(me.Msg, v.want) {
						t.Errorf("%s: %s:\n got %s\nwant path %s and %q", load.name, in, err, f.path, v.want)
					}
					for i := 0; i < len(me.Msg); i++ {
						if c := me.Msg[i]; c < 0x20 || c == 0x7f {
							t.Fatalf("%s: the message holds control byte 0x%02x: %q", load.name, c, me.Msg)
						}
					}
					if strings.Contains(me.Msg, "\u009b") || strings.Contains(me.Msg, "\u0085") || strings.Contains(me.Msg, "\u009f") {
						t.Fatalf("%s: the message holds a C1 control: %q", load.name, me.Msg)
					}
				}
			})
		}
	}
}

// TestAcceptedHeaderStrings: valid Unicode that every consumer carries
// exactly is accepted in header strings, read the same escaped or not.
func TestAcceptedHeaderStrings(t *testing.T) {
	for _, v := range []struct{ json, want string }{
		{`vm-é`, "vm-é"},
		{`vm-\u00e9`, "vm-é"},
		{`vm-\u00E9`, "vm-é"},
		{`a\u2028b`, "a\u2028b"},
		{"a\u2028b", "a\u2028b"},
		{`a\u202eb`, "a\u202eb"},
		{`\ud83d\ude00`, "😀"},
		{`\uD83D\uDE00x`, "😀x"},
		{`\ufffd`, "\uFFFD"},
		{"\uFFFD", "\uFFFD"},
		{`a\\u0000`, `a\u0000`},
		{`\u00a0`, "\u00a0"}, // U+00A0 is not a control: the first after C1
		{`quote\"d`, `quote"d`},
	} {
		for _, f := range headerFields {
			in := fmt.Sprintf(f.format, v.json)
			_, inc, err := LoadModel(doc(in))
			if err != nil {
				t.Errorf("%s %s: %v", f.name, v.json, err)
				continue
			}
			var got string
			switch f.name {
			case "id":
				got = inc.ID(0)
			case "type version", "classVersion":
				got = inc.Type(0).Version
			case "package":
				got = inc.Type(0).Package
			case "subscriber":
				got = inc.Dependencies(0)[0].Subscriber
			case "handler":
				got = inc.Dependencies(0)[0].Handler
			}
			if got != v.want {
				t.Errorf("%s %s read as %q; want %q", f.name, v.json, got, v.want)
			}
		}
	}
}

// TestLoneSurrogateReferenceMatchesNoID: "vm-\ud800" and "vm-\udc00" are
// different JSON strings that encoding/json reads as the same "vm-\uFFFD".
// Outside headers such a string is kept byte for byte, but it is no
// reference: it equals no id, not even one holding U+FFFD itself.
func TestLoneSurrogateReferenceMatchesNoID(t *testing.T) {
	const in = `{"Objects": {"?": {"id": "vm-\ufffd"}, "a": "vm-\ud800", "b": "vm-\udc00", "c": "vm-\ufffd", "d": "vm-\ud83d\ude00"}}`
	_, inc, err := LoadModel(doc(in))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	inc.StringsOfLength(inc.MightBeID, func(sv StringValue) bool {
		got = append(got, inc.PathAt(sv.Offset))
		return true
	})
	if want := "$.Objects.c"; len(got) != 1 || got[0] != want {
		t.Errorf("references %q; want only %s", got, want)
	}
	n := 0
	inc.Strings(func(StringValue) bool { n++; return true })
	if n != 2 {
		t.Errorf("Strings yielded %d values; want 2 (the lone surrogates are skipped)", n)
	}
}

// TestRandomValidIDsAccepted: ids of random runes, any but the control
// characters and surrogates, written raw or escaped as encoding/json
// writes them, are accepted and read back exactly.
func TestRandomValidIDsAccepted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 2000; n++ {
		var b strings.Builder
		for k := 1 + rng.IntN(12); k > 0; k-- {
			var r rune
			switch rng.IntN(4) {
			case 0:
				r = 0x20 + rng.Int32N(0x5f) // printable ASCII
			case 1:
				r = 0xa0 + rng.Int32N(0x800-0xa0)
			case 2:
				r = 0x800 + rng.Int32N(0x10000-0x800)
			default:
				r = 0x10000 + rng.Int32N(0x110000-0x10000)
			}
			if r >= 0xd800 && r <= 0xdfff {
				r = 'x'
			}
			b.WriteRune(r)
		}
		id := b.String()
		q, err := json.Marshal(id) // escapes '"', '\', U+2028, U+2029, <, >, &
		if err != nil {
			t.Fatal(err)
		}
		in := fmt.Sprintf(`{"Objects": {"?": {"id": %s, "dependencies": {"onDestruction": [{"subscriber": %s, "handler": %s}]}}, "r": %s}}`, q, q, q, q)
		_, inc, err := LoadModel(doc(in))
		if err != nil {
			t.Fatalf("%q: %v", id, err)
		}
		if d := inc.Dependencies(0)[0]; inc.ID(0) != id || d.Subscriber != id || d.Handler != id {
			t.Fatalf("%q read as %q, %q, %q", id, inc.ID(0), d.Subscriber, d.Handler)
		}
		refs := 0
		inc.StringsOfLength(inc.MightBeID, func(sv StringValue) bool {
			if sv.Value == id {
				refs++
			}
			return true
		})
		if refs != 1 {
			t.Fatalf("%q: %d references; want 1", id, refs)
		}
	}
}
