package planfile

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/objgc/objgc/destroy/order"
)

// encodingJSON is v as jsonStream.value writes it through encoding/json:
// indented by two spaces after prefix, HTML characters not escaped, no
// final newline. The hand-written encoders must write the same bytes.
func encodingJSON(t *testing.T, v any, prefix string) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TestAppendPlanObject compares the hand-written encoder of plan objects
// with encoding/json, indented as jsonStream.value indents (HTML
// characters not escaped), on objects with every field empty, nil, set,
// and holding strings that need escapes.
func TestAppendPlanObject(t *testing.T) {
	str := func(s string) *string { return &s }
	odd := []string{"", "plain", `quote " and \ backslash`, "<html> & more", "tab\tnew\nline\r\x00\x1f\x7f", "é ü 日本", "\u2028\u2029", "bad \xff utf-8", "\U0001F600"}
	var objs []Object
	objs = append(objs, Object{}) // nil slices and pointers
	objs = append(objs, Object{Reasons: []order.Reason{}, Classes: []string{}, Hooks: []Hook{}})
	for _, s := range odd {
		objs = append(objs, Object{
			ID: s, Type: s, Path: s, Owner: str(s), Package: str(s),
			Reasons: []order.Reason{{Code: order.ReasonOwnedBy, ID: s}, {Code: order.ReasonTopLevel}, {Code: order.ReasonSubscriber, ID: "x", Handler: s}, {Code: "c", Handler: "h"}},
			TypeRef: Type{Name: s, Version: s, Package: s},
			Classes: []string{s, "a", s},
			Hooks: []Hook{{Event: "destroy", Class: s, Path: s, SHA256: s}, {Event: s, Class: "c", Path: "p", Error: s},
				{Event: "e", Class: "c", Path: "p", SHA256: "abc", Error: s}, {},
				{Event: "destroy", Class: "c", Path: "p", SHA256: "abc", RunAs: s}, {Path: "p", Error: "e", RunAs: s}, {Path: "p", RunAs: s}},
		})
		objs = append(objs, Object{ID: s, TypeRef: Type{Name: "n", Package: s}, Classes: []string{s}})
		objs = append(objs, Object{ID: s, TypeRef: Type{Version: s}})
	}
	for _, prefix := range []string{"", "        "} {
		for i, po := range objs {
			got := appendPlanObject(nil, prefix, &po)
			if w := encodingJSON(t, po, prefix); !bytes.Equal(got, w) {
				t.Fatalf("object %d, prefix %q:\ngot:\n%s\nwant:\n%s", i, prefix, got, w)
			}
		}
	}
}

// TestAppendPlanNotification compares the hand-written encoder of plan
// notifications with encoding/json as TestAppendPlanObject does.
func TestAppendPlanNotification(t *testing.T) {
	odd := []string{"", "plain", `quote " and \ backslash`, "<html> & more", "tab\tnew\nline\r\x00\x1f\x7f", "é ü 日本", "\u2028\u2029", "bad \xff utf-8", "\U0001F600"}
	ns := []Notification{{}, {OldPlaces: []string{}}}
	for g, s := range odd {
		ns = append(ns, Notification{
			Group: g * 1000, Publisher: s, Subscriber: s, Handler: s,
			SubscriberTypeRef: &Type{Name: s, Version: s, Package: s},
			Hook:              &Hook{Event: s, Class: s, Path: s, SHA256: s, Error: s},
		})
		ns = append(ns, Notification{
			Group: -g, Publisher: "p", Subscriber: s,
			SubscriberTypeRef: &Type{Name: s},
			Hook:              &Hook{Event: "notify", Class: "c", Path: s},
			OldPlaces:         []string{s, "x"},
		})
		ns = append(ns, Notification{Handler: s, OldPlaces: []string{s}, Hook: &Hook{Error: s}})
	}
	for _, prefix := range []string{"", "    "} {
		for i, pn := range ns {
			got := appendPlanNotification(nil, prefix, &pn)
			if w := encodingJSON(t, pn, prefix); !bytes.Equal(got, w) {
				t.Fatalf("notification %d, prefix %q:\ngot:\n%s\nwant:\n%s", i, prefix, got, w)
			}
		}
	}
}

// TestAppendStringAtEveryOffset: appendString checks eight bytes at a
// time; a byte that needs an escape at any offset of a word, and after
// it, is still escaped as encoding/json escapes it.
func TestAppendStringAtEveryOffset(t *testing.T) {
	for _, c := range []string{"\"", "\\", "\n", "\x00", "\x1f", "\x7f", "é", "\u2028", "\xff", "<", "a"} {
		for pad := range 20 {
			for tail := range 10 {
				s := strings.Repeat("a", pad) + c + strings.Repeat("b", tail)
				if got, want := appendString(nil, s), encodingJSON(t, s, ""); !bytes.Equal(got, want) {
					t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
				}
			}
		}
	}
}

// TestDeeper: an indentation two spaces deeper, the same string as the
// concatenation, made without allocating for prefixes of spaces.
func TestDeeper(t *testing.T) {
	for _, prefix := range []string{"", "  ", strings.Repeat(" ", 62), strings.Repeat(" ", 63), strings.Repeat(" ", 70), "\t", " x"} {
		if got, want := deeper(prefix), prefix+"  "; got != want {
			t.Errorf("deeper(%q) = %q, want %q", prefix, got, want)
		}
	}
	prefix := strings.Repeat(" ", 6)
	if n := testing.AllocsPerRun(100, func() { _ = deeper(prefix) }); n != 0 {
		t.Errorf("deeper of six spaces: %v allocations", n)
	}
}
