package snapshot

import (
	"errors"
	"strings"
	"testing"
)

// TestLooksLikeYAML: the YAML hint is given for what YAML files begin
// with and never for a document that begins as JSON does.
func TestLooksLikeYAML(t *testing.T) {
	for in, want := range map[string]bool{
		"Objects:\n  a: 1\n":       true,
		"---\nObjects: {}\n":       true,
		"%YAML 1.2\n---\n":         true,
		"# comment\nObjects: {}\n": true,
		"- a\n- b\n":               true,
		"\n\n'Objects': {}\n":      true,
		`{"Objects": {},}`:         false,
		"[1, 2,]":                  false,
		"\n  {\"a\": 1":            false,
		"nul":                      false,
		"":                         false,
	} {
		if got := looksLikeYAML([]byte(in)); got != want {
			t.Errorf("looksLikeYAML(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestBOMRefused: a byte-order mark is a syntax error at 1:1 that says
// what it is, even before a valid document.
func TestBOMRefused(t *testing.T) {
	_, _, err := LoadModel(&Document{Name: "m.json", Data: []byte("\xef\xbb\xbf{\"Objects\": null}")})
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 1 || se.Column != 1 || !strings.Contains(se.Msg, "byte-order mark") {
		t.Fatalf("err %v; want a syntax error at 1:1 naming the byte-order mark", err)
	}
}

// TestSavedPlanAsModel: a JSON plan read as a model says so and how to
// apply it.
func TestSavedPlanAsModel(t *testing.T) {
	_, _, err := LoadModel(&Document{Name: "p.json", Data: []byte(`{"format_version": "2", "inputs": [], "groups": []}`)})
	if err == nil || !strings.Contains(err.Error(), "objgc apply p.json") {
		t.Fatalf("err %v; want the saved-plan hint", err)
	}
}
