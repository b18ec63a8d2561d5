package cmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// Exit codes of objgc, stable across releases (DESIGN.md section 7). They
// are listed under EXIT STATUS in every command's help.
const (
	ExitOK          = 0   // success, or nothing to do
	ExitError       = 1   // bad input, usage error, internal error
	ExitWorkFound   = 2   // plan --detailed-exitcode found objects to destroy
	ExitIncomplete  = 3   // apply finished with failed or blocked objects (output written); cache prune left selected packages in use
	ExitLocked      = 4   // a lock could not be taken in time
	ExitStalePlan   = 5   // a saved plan's inputs changed
	ExitInterrupted = 130 // interrupted; output written for what completed
)

const exitStatusHelp = `EXIT STATUS
  0    success, or nothing to do
  1    error: bad input, usage, internal
  2    plan --detailed-exitcode found objects to destroy
  3    apply finished with failed or blocked objects (output written);
       cache prune could not meet its policy: selected packages are in use
  4    a lock could not be taken in time
  5    a saved plan is stale: one of its inputs changed
  130  interrupted (output written for what completed)
`

// exitError carries an exit code other than ExitError up to Run, which is
// the only place that turns errors into exit codes.
type exitError struct {
	code int
	err  error // nil: exit quietly with code
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError marks a command-line mistake: Run prints the hint to --help.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// exitCode maps an error returned by a command to its exit status.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ExitError
}

// maxArgs is cobra.MaximumNArgs with the error marked as a usage error.
func maxArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) > n && n == 0 {
			return usageErrorf("%s takes no arguments, got %q", c.CommandPath(), args)
		}
		if len(args) > n {
			return usageErrorf("%s takes at most %d %s, got %d: %q", c.CommandPath(), n, plural(n, "argument", "arguments"), len(args), args)
		}
		return nil
	}
}

// noArgs is cobra.NoArgs with the error marked as a usage error.
func noArgs(c *cobra.Command, args []string) error { return maxArgs(0)(c, args) }

// minArgs is cobra.MinimumNArgs with the error marked as a usage error.
func minArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErrorf("%s needs at least %d %s", c.CommandPath(), n, plural(n, "argument", "arguments"))
		}
		return nil
	}
}
