package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Defaults for the zero values of [Invocation]'s limits.
const (
	DefaultTimeout   = 10 * time.Minute // --hook-timeout
	DefaultGrace     = 10 * time.Second // SIGTERM to SIGKILL
	DefaultMaxStdout = 16 << 20         // bytes
)

// stdinPipe makes Run give stdin through a pipe even where it can use a
// memfd: the fallback's tests set it.
var stdinPipe = false

// Event values of OBJGC_EVENT.
const (
	EventDestroy = "destroy"
	EventNotify  = "notify"
)

// Variables are the names of the variables Run adds to a hook's
// environment. They describe the call, not a setting: objgc run by a hook
// finds them in its environment and does not take them for misspelled
// settings.
var Variables = []string{
	"OBJGC_EVENT", "OBJGC_OBJECT_ID", "OBJGC_OBJECT_TYPE", "OBJGC_CLASS",
	"OBJGC_HANDLER", "OBJGC_SUBSCRIBER_ID", "OBJGC_GROUP",
	"OBJGC_PACKAGE_DIR", "OBJGC_DOOMED", "OBJGC_HOOK",
}

// An Invocation is one run of one hook (docs/hooks.md).
type Invocation struct {
	// Hook is the hook's path (Found.Path). A relative path is made
	// absolute against objgc's working directory, never looked up in
	// PATH.
	Hook string
	// ObjectID is the last argument and OBJGC_OBJECT_ID: the doomed
	// object's id (for a notification, the publisher's).
	ObjectID string
	// ObjectType is OBJGC_OBJECT_TYPE, the object's type string as in the
	// snapshot (name/version@package).
	ObjectType string
	// Class is OBJGC_CLASS: the class whose hook this is (Found.Class),
	// the object's class or one of its ancestors.
	Class string
	// Handler is OBJGC_HANDLER. A non-empty Handler makes this a
	// notification: argv is [hook, "notify", Handler, ObjectID],
	// OBJGC_EVENT is "notify" and stdout may hold a patch. Otherwise argv
	// is [hook, "destroy", ObjectID].
	Handler string
	// SubscriberID is OBJGC_SUBSCRIBER_ID: the subscriber whose handler
	// runs, for notifications.
	SubscriberID string
	// Group is OBJGC_GROUP: the index of the object's group.
	Group int
	// PackageDir is OBJGC_PACKAGE_DIR: the package the hook comes from
	// (Found.Source.PackageDir), or empty.
	PackageDir string
	// Doomed is OBJGC_DOOMED: the path of a file listing every doomed id,
	// one a line. Run makes it, PackageDir and Dir absolute.
	Doomed string
	// User, when not nil, is the user the hook runs as
	// (Found.Source.User): its uid, primary group and supplementary
	// groups replace objgc's in the hook's process. Doomed must then be
	// readable by that user.
	User *User
	// Dir is the working directory. Empty means PackageDir when set, else
	// the hook's directory (Found.WorkDir).
	Dir string
	// Stdin is the JSON document written to the hook's stdin (see
	// [Document]); nil gives the hook an empty stdin.
	Stdin []byte
	// Env is the base environment, objgc's own (cmd gives its IO.Environ); the
	// OBJGC_* variables above are added to it and replace any of the
	// same name. A nil Env gives the hook only the OBJGC_* variables.
	Env []string
	// Timeout bounds the hook's run; 0 means DefaultTimeout.
	Timeout time.Duration
	// Grace is how long the hook's process group has between SIGTERM and
	// SIGKILL; 0 means DefaultGrace. It also bounds how long Run waits
	// for processes the hook left behind that still hold its stdout or
	// stderr.
	Grace time.Duration
	// MaxStdout bounds stdout in bytes; 0 means DefaultMaxStdout. More is
	// a failure.
	MaxStdout int64
	// CheckPatch, when set, checks a notification's patch (Result.Patch,
	// non-nil) before Run returns: an error fails the hook with the reason
	// "stdout: patch rejected: <error>", so that the caller never records
	// as done a patch it cannot apply. objgc's check is
	// writeback.PatchChecker, the rules of the write-back.
	CheckPatch func(patch json.RawMessage) error
	// SHA256, when set, is the sha256 (lower-case hex) the hook file
	// must have: Run hashes the file it opened, compares, and runs that
	// same open file (on Linux, see execOpen), so that a hook replaced or
	// edited since it was planned fails with ErrChanged and does not run.
	// Empty: not checked.
	SHA256 string
	// Recorded says that SHA256 is the digest recorded when the hook's
	// package was added to the cache (objgc cache add), not the one
	// planned: a hook edited in the cache since then fails, saying so.
	Recorded bool
	// Sums, when set, remembers the sha256 of hook files between runs
	// (see Sums); nil hashes the hook every run.
	Sums *Sums
	// Stderr, when set, receives each line the hook writes to stderr,
	// without its line ending (a line longer than 64 KiB arrives in
	// pieces), as termsafe.String shows it: Go-quoted when it holds a
	// control character, invalid UTF-8 or another unprintable rune. Calls come one at a time, from another goroutine, and all
	// happen before Run returns.
	Stderr func(line string)
}

func (inv *Invocation) event() string {
	if inv.Handler != "" {
		return EventNotify
	}
	return EventDestroy
}

// args is argv after the hook's path (docs/hooks.md).
func (inv *Invocation) args() []string {
	if inv.Handler != "" {
		return []string{EventNotify, inv.Handler, inv.ObjectID}
	}
	return []string{EventDestroy, inv.ObjectID}
}

func (inv *Invocation) env() []string {
	return append(slices.Clip(inv.Env),
		"OBJGC_EVENT="+inv.event(),
		"OBJGC_OBJECT_ID="+inv.ObjectID,
		"OBJGC_OBJECT_TYPE="+inv.ObjectType,
		"OBJGC_CLASS="+inv.Class,
		"OBJGC_HANDLER="+inv.Handler,
		"OBJGC_SUBSCRIBER_ID="+inv.SubscriberID,
		"OBJGC_GROUP="+strconv.Itoa(inv.Group),
		"OBJGC_PACKAGE_DIR="+inv.PackageDir,
		"OBJGC_DOOMED="+inv.Doomed,
		"OBJGC_HOOK="+inv.Hook,
	)
}

// Result is what a hook run produced. Run returns it also on failure, for
// the report.
type Result struct {
	// Stdout is what the hook wrote to stdout, at most MaxStdout bytes.
	Stdout []byte
	// Output is the JSON object on stdout without surrounding
	// whitespace, nil when stdout was empty.
	Output json.RawMessage
	// Patch is the "patch" member of Output: an RFC 7386 JSON Merge
	// Patch (a JSON object) for the subscriber, which package writeback
	// checks and applies. Only notifications have one; nil when absent or
	// null.
	Patch json.RawMessage
	// ExitCode is the exit status, -1 when the hook did not exit
	// normally.
	ExitCode int
	// StderrTail is the last 4 KiB of stderr, from a line start.
	StderrTail string
	// Duration is the wall time from start to the end of the hook's
	// process group's output.
	Duration time.Duration
	// Pid is the hook's process id, which is also its process group id;
	// 0 when it did not start.
	Pid int
}

// Run runs one hook the way docs/hooks.md, "How a hook is run", says, and waits for it.
//
// The hook file is opened once; the open file is checked (a regular,
// executable file, inside inv.PackageDir when it comes from a package,
// of sha256 inv.SHA256 when set: else a *HookError wrapping ErrChanged)
// and, on Linux, that open file is executed (/proc/self/fd/3, the hook's
// descriptor 3; a script's $0 is then that path, OBJGC_HOOK the hook's).
//
// There is no shell: argv is [hook, "destroy", object-id] or
// [hook, "notify", handler, publisher-id], the environment is
// inv.Env plus the OBJGC_* variables, stdin is inv.Stdin (on Linux a
// sealed memfd, which the hook may read again but not write; elsewhere a
// pipe), stdout and stderr are pipes. The hook runs in
// a process group of its own (setpgid(2)), so that signals reach everything
// it started. Exit status 0 with stdout empty or exactly one JSON object is
// success; anything else is a *HookError, returned with a non-nil Result.
//
// Stopping a hook: when inv.Timeout expires or ctx is done, the hook's
// process group gets SIGTERM, then SIGKILL inv.Grace later if any of it is
// still there; Run returns once the group has exited or been killed (a
// process that left the group with setsid(2) and holds the hook's output
// is cut off at the same time). The caller's signal handling picks between
// the two ways docs/hooks.md, "Time limits and stopping", gives: to let running hooks finish (first
// SIGINT), stop starting new ones and keep ctx alive; to kill them (second
// SIGINT), cancel ctx. A timeout is reported with TimedOut and wraps
// context.DeadlineExceeded; an interruption wraps ctx's error
// (context.Canceled), so errors.Is tells the two apart.
//
// Processes the hook leaves behind are its own business, unless they keep
// its stdout or stderr open: Run waits inv.Grace for them after the hook
// exits, then kills the process group and fails the hook.
func Run(ctx context.Context, inv Invocation) (*Result, error) {
	inv.complete()
	res := &Result{ExitCode: -1}
	fail := func(he *HookError) (*Result, error) { return failure(res, &inv, he) }

	if err := ctx.Err(); err != nil {
		return fail(&HookError{Reason: "not started: " + err.Error(), Err: err})
	}
	hf, he := openChecked(&inv)
	if hf != nil {
		defer hf.Close()
	}
	if he != nil {
		return fail(he)
	}

	runCtx, cancel := context.WithTimeout(ctx, inv.Timeout)
	defer cancel()
	cmd, stdin := command(&inv, hf)
	if stdin != nil {
		// The child has its own descriptor once started.
		defer stdin.Close()
	}
	p, he := start(cmd, &inv)
	if he != nil {
		return fail(he)
	}
	defer p.close()
	res.Pid = p.pgid
	s := stopOn(runCtx, p, inv.Grace)
	waitErr := p.wait(s, inv.Grace)
	terminated, killed := s.finish()
	res.Duration = time.Since(p.start)
	p.stderr.flush()
	res.StderrTail = p.stderr.Tail()
	res.Stdout = p.stdout.buf.Bytes()
	signal := ""
	if ps := cmd.ProcessState; ps != nil {
		res.ExitCode = ps.ExitCode()
		signal = exitSignal(ps)
	}

	switch {
	case terminated:
		how := "process group terminated"
		if killed {
			how = "process group killed"
		}
		if err := ctx.Err(); err != nil {
			return fail(&HookError{Signal: signal, Reason: "interrupted (" + err.Error() + "), " + how, Err: err})
		}
		return fail(&HookError{Signal: signal, TimedOut: true,
			Reason: fmt.Sprintf("timed out after %v, %s", inv.Timeout, how), Err: context.DeadlineExceeded})
	case signal != "":
		return fail(&HookError{Signal: signal, Reason: "killed by signal " + signal, Err: waitErr})
	case res.ExitCode != 0 && waitErr != nil:
		return fail(&HookError{Reason: waitErr.Error(), Err: waitErr})
	case errors.Is(waitErr, exec.ErrWaitDelay):
		_ = killGroup(p.pgid)
		return fail(&HookError{Reason: fmt.Sprintf("exited, but processes it started kept its stdout or stderr open %v later; process group killed", inv.Grace), Err: waitErr})
	case waitErr != nil:
		return fail(&HookError{Reason: waitErr.Error(), Err: waitErr})
	case p.stdout.overflow():
		return fail(&HookError{Reason: fmt.Sprintf("stdout is larger than %d bytes", inv.MaxStdout)})
	}
	return checkOutput(res, &inv)
}

// complete gives inv's zero limits their defaults and makes its paths
// absolute: the hook runs in another directory, where every path it is
// given must mean the same.
func (inv *Invocation) complete() {
	if inv.Timeout <= 0 {
		inv.Timeout = DefaultTimeout
	}
	if inv.Grace <= 0 {
		inv.Grace = DefaultGrace
	}
	if inv.MaxStdout <= 0 {
		inv.MaxStdout = DefaultMaxStdout
	}
	inv.Hook = absPath(inv.Hook)
	inv.PackageDir, inv.Doomed, inv.Dir = absPath(inv.PackageDir), absPath(inv.Doomed), absPath(inv.Dir)
}

// openChecked opens the hook once: what is checked here (kind, mode,
// where its links lead, its sha256) is the open file, and on Linux that
// open file is what runs (execOpen), whatever replaces the path
// meanwhile. The file is returned, to be closed, even with an error.
func openChecked(inv *Invocation) (*os.File, *HookError) {
	path := inv.Hook
	hf, fi, err := openHook(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return hf, &HookError{Reason: "not found", Err: err}
	case err != nil:
		return hf, &HookError{Reason: "cannot start: " + err.Error(), Err: err}
	case !fi.Mode().IsRegular():
		return hf, &HookError{Reason: "not a regular file", Err: fmt.Errorf("%s: mode %v", path, fi.Mode())}
	case fi.Mode().Perm()&0o111 == 0:
		return hf, &HookError{Reason: "not executable", Err: ErrNotExecutable}
	}
	if err := outsidePackageFile(Source{PackageDir: inv.PackageDir}, path, func() (string, error) { return realPath(hf, path) }); err != nil {
		return hf, &HookError{Reason: "leads outside its package", Err: err}
	}
	if inv.SHA256 != "" {
		sum, err := inv.Sums.sum(path, hf, fi)
		switch {
		case err != nil:
			return hf, &HookError{Reason: "cannot start: " + err.Error(), Err: err}
		case sum != inv.SHA256:
			reason := changed(inv.SHA256, sum)
			if inv.Recorded {
				reason = fmt.Sprintf("differs from the sha256 recorded when its package was added to the cache (sha256 %s, now %s); not run: objgc cache verify shows the damage, objgc cache add --force repairs it", short(inv.SHA256), short(sum))
			}
			return hf, &HookError{Reason: reason, Err: ErrChanged}
		}
	}
	return hf, nil
}

// command is the hook's command: no shell, argv and environment as
// Invocation says, the open hook file hf executed where the system allows
// (execOpen), in the hook's working directory and a process group of its
// own. Stdin is a sealed memfd where there is one (returned, for the
// caller to close once the hook is done), else a pipe os/exec writes
// from a goroutine, which a process holding stdin without reading it
// would block: Wait gives that goroutine the grace period too
// (WaitDelay).
func command(inv *Invocation, hf *os.File) (cmd *exec.Cmd, stdin *os.File) {
	cmd = exec.Command(inv.Hook, inv.args()...)
	execOpen(cmd, hf)
	cmd.Dir = inv.Dir
	if cmd.Dir == "" {
		cmd.Dir = Found{Path: inv.Hook, Source: Source{PackageDir: inv.PackageDir}}.WorkDir()
	}
	cmd.Env = inv.env()
	if len(inv.Stdin) > 0 {
		if f, err := stdinFile(inv.Stdin); err == nil && !stdinPipe {
			cmd.Stdin, stdin = f, f
		} else {
			if f != nil {
				f.Close()
			}
			cmd.Stdin = bytes.NewReader(inv.Stdin)
		}
	}
	cmd.WaitDelay = inv.Grace
	setProcessGroup(cmd)
	if inv.User != nil {
		setUser(cmd, inv.User)
	}
	return cmd, stdin
}

// checkOutput finishes a run that exited 0: its stdout must be empty or
// one JSON object (Result.Output), and a notification's patch must pass
// inv.CheckPatch.
func checkOutput(res *Result, inv *Invocation) (*Result, error) {
	fail := func(he *HookError) (*Result, error) { return failure(res, inv, he) }
	obj, patch, reason, err := parseStdout(res.Stdout, inv.Handler != "")
	if err != nil {
		return fail(&HookError{Reason: reason, Err: err})
	}
	res.Output = obj
	if patch != nil && inv.CheckPatch != nil {
		if err := inv.CheckPatch(patch); err != nil {
			return fail(&HookError{Reason: "stdout: patch rejected: " + err.Error(), Err: err})
		}
	}
	res.Patch = patch
	return res, nil
}

// failure completes he with the run it is about and what the hook left
// (its exit code, the tail of its stderr), and returns it with res.
func failure(res *Result, inv *Invocation, he *HookError) (*Result, error) {
	he.Hook, he.Event, he.Handler, he.ObjectID = inv.Hook, inv.event(), inv.Handler, inv.ObjectID
	he.ExitCode = res.ExitCode
	he.StderrTail = res.StderrTail
	return res, he
}

// absPath makes a non-empty path absolute; filepath.Abs fails only when
// the working directory is gone, and then the path is kept as it is.
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
