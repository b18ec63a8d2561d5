package hook

import (
	"strconv"
	"strings"
)

// HookError is the error [Run] returns for every hook failure: the hook
// could not start, exited with a non-zero status or on a signal, timed out
// or was interrupted, or wrote something other than one JSON object to
// stdout.
type HookError struct {
	// Hook is the hook's path, Event its argv[1] ("destroy" or
	// "notify"), Handler the handler's name for a notification, ObjectID
	// the object it ran for (for a notification, the publisher).
	Hook, Event, Handler, ObjectID string
	// ExitCode is the hook's exit status, or -1 when it did not exit
	// normally (never started, or ended by a signal).
	ExitCode int
	// Signal names the signal that ended the hook ("SIGKILL"), or is
	// empty.
	Signal string
	// TimedOut is set when the hook ran past its timeout and its process
	// group was terminated.
	TimedOut bool
	// Reason says what happened, in lower case: "exit status 3",
	// "timed out after 2s, process group killed", "not executable",
	// "stdout is not a JSON object: ...".
	Reason string
	// StderrTail is the end of the hook's stderr (at most 4 KiB), for the
	// apply report.
	StderrTail string
	// Err is the underlying error: an *exec.ExitError,
	// context.DeadlineExceeded for a timeout, the context's error when
	// it was cancelled, ErrNotExecutable, a JSON syntax error, ...
	Err error
}

// Error returns "hook <path> destroy of <object id>: <reason>" or
// "hook <path> notify <handler> of <publisher id>: <reason>".
func (e *HookError) Error() string {
	event := quoteIfNeeded(e.Event)
	if e.Handler != "" {
		event += " " + quoteIfNeeded(e.Handler)
	}
	return "hook " + quoteIfNeeded(e.Hook) + " " + event + " of " + quoteIfNeeded(e.ObjectID) + ": " + e.Reason
}

// Unwrap returns Err.
func (e *HookError) Unwrap() error { return e.Err }

// quoteIfNeeded keeps the message readable for ordinary paths and ids, and
// unambiguous for ones holding spaces, quotes or control characters.
func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool {
		return r <= ' ' || r == '"' || r == 0x7f || !strconv.IsPrint(r)
	}) {
		return strconv.Quote(s)
	}
	return s
}
