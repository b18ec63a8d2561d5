package cmd

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestErrorTextIsOneLine: whatever wraps a name holding a line break or
// an escape, the error prints as one line; a list of one item a line
// keeps its lines, and what wraps it is quoted around it.
func TestErrorTextIsOneLine(t *testing.T) {
	bad := "x\nobjgc: all 12 objects destroyed\x1b[2J"
	_, openErr := os.Open(bad)
	for _, err := range []error{
		fmt.Errorf("loading %s: %w", bad, openErr),
		fmt.Errorf("reading configuration %s: %w", bad, joinErrors(errors.New("a"), errors.New("b"))),
	} {
		got := errorText(err)
		if i := strings.Index(got, "\n"); i >= 0 && !strings.Contains(got, "\nb") {
			t.Errorf("errorText = %q: a line break from the name", got)
		}
		if strings.Contains(got, "\x1b") || strings.Contains(got, "\nobjgc") {
			t.Errorf("errorText = %q: the name's bytes reach the terminal", got)
		}
	}
	lines := newLinesError([]string{"2 dangling references:", "  a references doomed b at $.x", "  c " + bad})
	want := "2 dangling references:\n  a references doomed b at $.x\n" + `"  c x\nobjgc: all 12 objects destroyed\x1b[2J"`
	if got := errorText(lines); got != want {
		t.Errorf("errorText(lines) = %q; want %q", got, want)
	}
	wrapped := fmt.Errorf("apply %s: %w", bad, lines)
	if got := errorText(wrapped); !strings.HasPrefix(got, `"apply x\nobjgc: all 12 objects destroyed\x1b[2J: "`+"2 dangling references:\n") || !strings.HasSuffix(got, want[strings.Index(want, "\n"):]) {
		t.Errorf("errorText(wrapped) = %q", got)
	}
	if got := errorText(errors.New("hooks dir ./hoks (from --hooks-dir): no such directory")); got != "hooks dir ./hoks (from --hooks-dir): no such directory" {
		t.Errorf("an ordinary message changed: %q", got)
	}
}
