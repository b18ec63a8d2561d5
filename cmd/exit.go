package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/pkgcache"
)

// Exit codes of objgc, stable across releases (docs/design.md, "Exit
// codes"): scripts and CI jobs branch on them. They are listed under EXIT
// STATUS in every command's help.
const (
	ExitOK          = 0   // success, or nothing to do
	ExitError       = 1   // bad input, usage error, internal error; plan --detailed-exitcode on a plan apply would refuse
	ExitWorkFound   = 2   // plan --detailed-exitcode found objects to destroy
	ExitIncomplete  = 3   // apply finished with failed or blocked objects or failed notifications (output written); a cache command left a package in use
	ExitLocked      = 4   // a lock could not be taken in time (another prune; never a package in use)
	ExitStalePlan   = 5   // a saved plan's inputs changed
	ExitInterrupted = 130 // interrupted; output written for what completed
)

// exitStatuses are the exit codes with their meaning, as every command's
// help and man page list them.
var exitStatuses = []struct {
	code    int
	meaning string
}{
	{ExitOK, "success, or nothing to do"},
	{ExitError, "error: bad input, usage, internal; plan --detailed-exitcode: apply would refuse the plan"},
	{ExitWorkFound, "plan --detailed-exitcode found objects to destroy, and apply would run"},
	{ExitIncomplete, "apply finished with failed or blocked objects or failed notifications (output written); a cache command (add --force, migrate, rm, prune) left a package in use, or verify could not check one being unpacked"},
	{ExitLocked, "a lock could not be taken in time (e.g. another prune runs)"},
	{ExitStalePlan, "a saved plan is stale: one of its inputs changed"},
	{ExitInterrupted, "interrupted (output written for what completed)"},
}

// exitStatusHelp is the EXIT STATUS paragraph of every command's help.
var exitStatusHelp = func() string {
	var b strings.Builder
	b.WriteString("EXIT STATUS\n")
	for _, s := range exitStatuses {
		fmt.Fprintf(&b, "  %-4d %s\n", s.code, s.meaning)
	}
	return b.String()
}()

// exitError carries an outcome that is no error of the domain up to Run
// (plan found work, apply or prune left work, cache add failed only on
// locks): exitCode maps the domain's sentinel errors itself.
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

// exitCode maps an error returned by a command to its exit status, the one
// place where errors become codes: an exitError's code; a package in use
// (pkgcache.ErrInUse) ExitIncomplete; a lock another
// process holds (apply's target lock, a *destroy.LockedError; a running
// prune, pkgcache.ErrPruneRunning) ExitLocked; a stale saved plan ExitStalePlan;
// a run stopped by SIGINT or SIGTERM (destroy.ErrInterrupted, which plan
// and the cache commands wrap too) ExitInterrupted; anything else
// ExitError.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	// Not errors.Is(err, destroy.ErrLocked): that is the one "lock is
	// held" error of objgc, which a package's usage lock in plan wraps too,
	// and that is an error like any other (exit 1).
	var le *destroy.LockedError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, pkgcache.ErrInUse):
		return ExitIncomplete
	case errors.As(err, &le), errors.Is(err, pkgcache.ErrPruneRunning):
		return ExitLocked
	case errors.Is(err, destroy.ErrStalePlan):
		return ExitStalePlan
	case errors.Is(err, destroy.ErrInterrupted):
		return ExitInterrupted
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
