package termsafe

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile is every kind of string that must not reach a terminal as it is.
var hostile = map[string]string{
	"ESC":              "a\x1bb",
	"CSI clear":        "a\x1b[2J",
	"OSC retitle":      "a\x1b]0;x\x07",
	"BEL":              "a\ab",
	"CR":               "ok\r0 to destroy",
	"LF":               "a\n0 to destroy",
	"NUL":              "a\x00b",
	"DEL":              "a\x7fb",
	"C1 CSI":           "a\u009b2J",
	"C1 NEL":           "a\u0085b",
	"line separator":   "a\u2028b",
	"para separator":   "a\u2029b",
	"RLO bidi":         "a\u202eb",
	"isolate bidi":     "a\u2066b\u2069",
	"invalid UTF-8":    "a\xffb",
	"overlong slash":   "a\xc0\xafb",
	"UTF-8 surrogate":  "a\xed\xa0\x80b",
	"leading quote":    `"a"`,
	"zero width space": "a\u200bb",
	"no-break space":   "a\u00a0b",
}

func TestHostileStringsAreQuoted(t *testing.T) {
	for name, s := range hostile {
		t.Run(name, func(t *testing.T) {
			got := String(s)
			if got != strconv.Quote(s) {
				t.Fatalf("String(%q) = %q; want %q", s, got, strconv.Quote(s))
			}
			for i := 0; i < len(got); i++ {
				if c := got[i]; c < 0x20 || c == 0x7f {
					t.Fatalf("String(%q) holds control byte 0x%02x", s, c)
				}
			}
			if Safe(s) {
				t.Fatalf("Safe(%q) = true", s)
			}
			back, err := strconv.Unquote(got)
			if err != nil || back != s {
				t.Fatalf("Unquote(%s) = %q, %v; want the original bytes", got, back, err)
			}
		})
	}
}

func TestPrintableStringsStayAsTheyAre(t *testing.T) {
	for _, s := range []string{
		"", "vm-1", "io.murano.Environment/0.0.0@io.murano", `$.applications[0]["?"].id`,
		"vm-é", "ВМ 1", "日本", "tab\tseparated", `back\slash`, `a "quoted" word`, "emoji 🙂",
	} {
		if got := String(s); got != s {
			t.Errorf("String(%q) = %q; want it unchanged", s, got)
		}
	}
}

func TestLinesQuotesEachLine(t *testing.T) {
	got := Lines("2 dangling references:\n  a\x1b[2J references b\n  c references d")
	want := "2 dangling references:\n" + `"  a\x1b[2J references b"` + "\n  c references d"
	if got != want {
		t.Fatalf("Lines = %q; want %q", got, want)
	}
}

func TestJSONEscapesUnprintableRunes(t *testing.T) {
	for name, s := range hostile {
		if !utf8.ValidString(s) {
			continue // encoding/json writes U+FFFD for these
		}
		t.Run(name, func(t *testing.T) {
			in, err := json.Marshal(map[string]string{"id": s, "k" + s: "é 🙂 \U0001F3F4\U000E0067"})
			if err != nil {
				t.Fatal(err)
			}
			out := JSON(in)
			var back map[string]string
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			if back["id"] != s || back["k"+s] != "é 🙂 \U0001F3F4\U000E0067" {
				t.Fatalf("%s reads back as %q", out, back)
			}
			for _, r := range string(out) {
				if !strconv.IsPrint(r) {
					t.Fatalf("%s holds %U", out, r)
				}
			}
		})
	}
	plain := []byte(`{"id": "vm-é"}`)
	if got := JSON(plain); &got[0] != &plain[0] {
		t.Error("JSON copied a text with nothing to escape")
	}
}

// TestJSONAtEveryOffset places runes to escape, and printable ones to
// keep, at each offset of an eight-byte word: JSON skips plain ASCII
// eight bytes at a time, and what follows a skipped word must still be
// looked at.
func TestJSONAtEveryOffset(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"\x7f", `\u007f`},
		{"\u0085", `\u0085`},
		{"\u202e", `\u202e`},
		{"\u00a0", `\u00a0`},
		{"é", "é"},
		{"🙂", "🙂"},
	} {
		for pad := range 20 {
			for tail := range 10 {
				p, q := strings.Repeat("a", pad), strings.Repeat("b", tail)
				in := `{"k":"` + p + c.in + q + `"}`
				want := `{"k":"` + p + c.want + q + `"}`
				if got := string(JSON([]byte(in))); got != want {
					t.Fatalf("JSON(%q) = %q, want %q", in, got, want)
				}
			}
		}
	}
}

// TestSafeAtEveryOffset places each character Safe refuses, and ones it
// keeps, at each offset of an eight-byte word (Safe skips printable ASCII
// eight bytes at a time).
func TestSafeAtEveryOffset(t *testing.T) {
	for _, c := range []struct {
		s    string
		safe bool
	}{
		{"\x1b", false}, {"\n", false}, {"\x7f", false}, {"\u0085", false},
		{"\u202e", false}, {"\xff", false}, {"\t", true}, {"é", true}, {" ", true},
	} {
		for pad := range 20 {
			for tail := range 10 {
				s := strings.Repeat("a", pad) + c.s + strings.Repeat("b", tail)
				if got := Safe(s); got != c.safe {
					t.Fatalf("Safe(%q) = %v, want %v", s, got, c.safe)
				}
			}
		}
	}
}

func TestLineQuotesTheWholeMessage(t *testing.T) {
	for name, s := range hostile {
		if name == "leading quote" {
			continue
		}
		msg := "loading " + s + ": no such file"
		if got := Line(msg); got != strconv.Quote(msg) || strings.ContainsAny(got, "\n\r\x1b") {
			t.Errorf("%s: Line(%q) = %q; want the whole message quoted", name, msg, got)
		}
	}
	for _, msg := range []string{`"a b" is not a valid id`, "hooks dir ./hoks (from --hooks-dir): no such directory", `the id "a\n" holds U+000A`} {
		if got := Line(msg); got != msg {
			t.Errorf("Line(%q) = %q; want it unchanged", msg, got)
		}
	}
}
