package cmd

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"

	"github.com/objgc/objgc/internal/termsafe"
)

// term returns s as text output shows it: unchanged when it is printable,
// else Go-quoted (strconv.Quote), so that a control character, an escape
// sequence, a line break or a bidirectional override from a model, a hook
// or a file name is shown, never obeyed (docs/decisions.md). Every string
// from outside objgc goes through term before it is printed as text.
func term(s string) string { return termsafe.String(s) }

// isTerminal reports whether w is a terminal (colour and progress lines are
// for terminals only, DESIGN.md section 9).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
