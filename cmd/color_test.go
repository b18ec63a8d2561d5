package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestColourOnlyOnATerminal: colour codes appear on a terminal, and never
// with NO_COLOR set, with --no-color, on TERM=dumb, or when stdout is not a
// terminal.
func TestColourOnlyOnATerminal(t *testing.T) {
	t.Setenv("OBJGC_CACHE_DIR", t.TempDir())
	tests := []struct {
		name    string
		tty     bool
		noColor string
		term    string
		args    []string
		colour  bool
	}{
		{"terminal", true, "", "xterm-256color", nil, true},
		{"terminal with NO_COLOR", true, "1", "xterm", nil, false},
		{"terminal with --no-color", true, "", "xterm", []string{"--no-color"}, false},
		{"dumb terminal", true, "", "dumb", nil, false},
		{"pipe", false, "", "xterm", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			streams := &IO{In: strings.NewReader(""), Out: &out, Err: &errb, IsTTYOut: tt.tty,
				Getenv: envWith(map[string]string{"NO_COLOR": tt.noColor, "TERM": tt.term})}
			args := append([]string{"plan", "../testdata/pairs/dangling-reference.json"}, tt.args...)
			if code := run(context.Background(), BuildInfo{}, args, streams); code != ExitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if got := strings.Contains(out.String(), "\x1b["); got != tt.colour {
				t.Errorf("colour codes present = %v, want %v:\n%q", got, tt.colour, out.String())
			}
		})
	}
}
