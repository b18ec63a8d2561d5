package cmd

import (
	"errors"
	"os"
	"strings"

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
// for terminals only: in a file or a pipe they would be noise).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// errorText is err's message as objgc prints it after "objgc: ": one
// line, termsafe.Line of the whole message, so that a name from outside
// holding a line break (a file a pull request added) cannot forge a line
// of its own in a CI log, whichever error wrapped it (os.PathError
// included). The one exception is a *linesError in the chain: its lines,
// each already safe, stay lines; what wraps it is quoted around it.
func errorText(err error) string {
	msg := err.Error()
	var le *linesError
	if errors.As(err, &le) {
		t := le.Error()
		if i := strings.Index(msg, t); i >= 0 {
			return termsafe.Line(msg[:i]) + t + termsafe.Line(msg[i+len(t):])
		}
	}
	return termsafe.Line(msg)
}

// linesError is an error of several lines, one item a line (the dangling
// references apply refuses, the settings of a configuration file that
// are wrong): errorText prints it so. Each line is kept as
// termsafe.Line shows it, so none holds a line break of its own.
type linesError struct {
	lines []string
	errs  []error // what the lines come from, for errors.Is and As
}

func newLinesError(lines []string, errs ...error) *linesError {
	safe := make([]string, len(lines))
	for i, l := range lines {
		safe[i] = termsafe.Line(l)
	}
	return &linesError{lines: safe, errs: errs}
}

// joinErrors is errors.Join with one line an error: nil for none.
func joinErrors(errs ...error) error {
	var lines []string
	var kept []error
	for _, err := range errs {
		if err != nil {
			lines = append(lines, err.Error())
			kept = append(kept, err)
		}
	}
	if kept == nil {
		return nil
	}
	return newLinesError(lines, kept...)
}

func (e *linesError) Error() string   { return strings.Join(e.lines, "\n") }
func (e *linesError) Unwrap() []error { return e.errs }
