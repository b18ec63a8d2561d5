package cmd

import (
	"errors"
	"fmt"
	"testing"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/pkgcache"
)

// TestExitCode: the domain's sentinel errors map to their exit status
// however deeply a command wrapped them, and the messages the commands
// build around them read as before.
func TestExitCode(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  error
		code int
		msg  string
	}{
		{nil, ExitOK, ""},
		{errors.New("bad input"), ExitError, "bad input"},
		{fmt.Errorf("apply: %w", &destroy.LockedError{Path: "m.json.lock", Holder: "pid 1"}), ExitLocked, "apply: m.json.lock is held by pid 1"},
		{fmt.Errorf("cache prune: %w in /c; nothing was touched", pkgcache.ErrPruneRunning), ExitLocked, "cache prune: a prune is already running in /c; nothing was touched"},
		{fmt.Errorf("apply: %w", destroy.ErrStalePlan), ExitStalePlan, "apply: saved plan is stale"},
		{cacheInterrupted("cache list", errors.New("context canceled")), ExitInterrupted, "cache list: interrupted: context canceled"},
		{errPlanInterrupted, ExitInterrupted, "interrupted"},
		{&exitError{code: ExitIncomplete}, ExitIncomplete, "exit status 3"},
		// A package lock not taken is exit 4 only when cache add says so
		// (every failure a lock): elsewhere it is an error like any other.
		{fmt.Errorf("plan: %w", pkgcache.ErrLocked), ExitError, "plan: lock is held by another process"},
	} {
		if got := exitCode(tt.err); got != tt.code {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.code)
		}
		if tt.err != nil && tt.err.Error() != tt.msg {
			t.Errorf("message %q, want %q", tt.err.Error(), tt.msg)
		}
	}
}
