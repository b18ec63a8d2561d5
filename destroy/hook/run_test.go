//go:build unix

package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests run real /bin/sh scripts. They do not call t.Parallel: a
// script written by one test while another forks can fail to exec with
// ETXTBSY (golang/go#22315).

// writeHook writes an executable sh script with body at dir/rel.
func writeHook(t *testing.T, dir, rel, body string) string {
	t.Helper()
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// run runs body as a hook for object "abc". It sets no time limit: a test asserts what
// ended the hook (its reason, signal, exec.ErrWaitDelay, its process group
// gone), not how long that took; a Run that hangs fails at go test's
// -timeout.
func run(t *testing.T, inv Invocation, body string) (*Result, error) {
	t.Helper()
	if inv.Hook == "" {
		inv.Hook = writeHook(t, t.TempDir(), "io.murano.Object/destroy", body)
	}
	if inv.ObjectID == "" {
		inv.ObjectID = "abc"
	}
	if inv.Env == nil {
		inv.Env = os.Environ()
	}
	res, err := Run(context.Background(), inv)
	if res == nil {
		t.Fatalf("Run returned a nil Result (err %v)", err)
	}
	return res, err
}

func hookError(t *testing.T, err error) *HookError {
	t.Helper()
	var he *HookError
	if !errors.As(err, &he) {
		t.Fatalf("err = %v (%T), want a *HookError", err, err)
	}
	return he
}

func TestRunArgvEnvCwdStdin(t *testing.T) {
	for _, tc := range []struct {
		name       string
		packageDir bool
		handler    string
	}{
		{name: "destroy"},
		{name: "notify from package", packageDir: true, handler: "onInstanceDestroyed"},
		// The handler's name is an argument of its own, never argv[1].
		{name: "notify handler named destroy", handler: "destroy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			out := filepath.Join(root, "out")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			rel := EventDestroy
			if tc.handler != "" {
				rel = "notify/" + tc.handler
			}
			// A path with spaces: nothing may split it.
			hook := writeHook(t, root, "hooks dir/io.murano.Object/"+rel, `
{
printf 'argv0=%s\n' "$0"
printf 'argc=%s\n' "$#"
for a in "$@"; do printf 'arg=%s\n' "$a"; done
printf 'pwd=%s\n' "$(pwd -P)"
env | grep -E '^(OBJGC_|BASE_)' | sort
} >"$BASE_OUT/dump"
cat >"$BASE_OUT/stdin"
`)
			pkg := ""
			wantDir := filepath.Dir(hook)
			if tc.packageDir {
				pkg = filepath.Join(root, "pkg")
				if err := os.Mkdir(pkg, 0o755); err != nil {
					t.Fatal(err)
				}
				wantDir = pkg
			}
			owner := "env-1"
			doc, err := Document{Event: "destroy", Object: json.RawMessage(`{"?": {"id": "abc def", "type": "io.murano.Object"}}`), OwnerID: &owner}.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			inv := Invocation{
				Hook:         hook,
				ObjectID:     "abc def",
				ObjectType:   "io.murano.Object/0.0.0@io.murano",
				Class:        "io.murano.Object",
				Handler:      tc.handler,
				SubscriberID: map[bool]string{true: "sub-1"}[tc.handler != ""],
				Group:        2,
				PackageDir:   pkg,
				Doomed:       filepath.Join(root, "doomed"),
				Stdin:        doc,
				// A stale OBJGC_EVENT in objgc's own environment is replaced.
				Env: append(os.Environ(), "BASE_OUT="+out, "BASE_X=kept", "OBJGC_EVENT=stale"),
			}
			if _, err := run(t, inv, ""); err != nil {
				t.Fatal(err)
			}
			dump, err := os.ReadFile(filepath.Join(out, "dump"))
			if err != nil {
				t.Fatal(err)
			}
			wantDir, _ = filepath.EvalSymlinks(wantDir)
			kind := "destroy"
			argv := []string{"argc=2", "arg=destroy", "arg=abc def"}
			if tc.handler != "" {
				kind = "notify"
				argv = []string{"argc=3", "arg=notify", "arg=" + tc.handler, "arg=abc def"}
			}
			// A script's $0 is the path the kernel executed: on Linux
			// the descriptor Run opened and checked (execOpen).
			argv0 := hook
			if runtime.GOOS == "linux" {
				argv0 = "/proc/self/fd/3"
			}
			want := strings.Join(append(append([]string{"argv0=" + argv0}, argv...),
				"pwd="+wantDir,
				"BASE_OUT="+out,
				"BASE_X=kept",
				"OBJGC_CLASS=io.murano.Object",
				"OBJGC_DOOMED="+inv.Doomed,
				"OBJGC_EVENT="+kind,
				"OBJGC_GROUP=2",
				"OBJGC_HANDLER="+tc.handler,
				"OBJGC_HOOK="+hook,
				"OBJGC_OBJECT_ID=abc def",
				"OBJGC_OBJECT_TYPE=io.murano.Object/0.0.0@io.murano",
				"OBJGC_PACKAGE_DIR="+pkg,
				"OBJGC_SUBSCRIBER_ID="+inv.SubscriberID,
				""), "\n")
			if string(dump) != want {
				t.Errorf("hook saw:\n%s\nwant:\n%s", dump, want)
			}
			stdin, err := os.ReadFile(filepath.Join(out, "stdin"))
			if err != nil {
				t.Fatal(err)
			}
			if wantIn := `{"event":"destroy","object":{"?":{"id":"abc def","type":"io.murano.Object"}},"owner_id":"env-1"}`; string(stdin) != wantIn {
				t.Errorf("stdin = %s, want %s", stdin, wantIn)
			}
		})
	}
}

func TestRunStdout(t *testing.T) {
	for _, tc := range []struct {
		name      string
		notify    bool
		stdout    string // printf format
		wantOut   string
		wantPatch string
		wantErr   string // substring of the HookError's Reason
	}{
		{name: "empty"},
		{name: "whitespace", stdout: ` \n\t\n`},
		{name: "object", stdout: `{"note": "done"}\n`, wantOut: `{"note": "done"}`},
		{name: "patch", notify: true, stdout: `\n{"patch": {"instance": null, "name": "x"}}\n`,
			wantOut: `{"patch": {"instance": null, "name": "x"}}`, wantPatch: `{"instance": null, "name": "x"}`},
		{name: "null patch", notify: true, stdout: `{"patch": null}`, wantOut: `{"patch": null}`},
		{name: "patch accepted by the check", notify: true, stdout: `{"patch": {"good": 1}}`,
			wantOut: `{"patch": {"good": 1}}`, wantPatch: `{"good": 1}`},
		{name: "patch rejected by the check", notify: true, stdout: `{"patch": {"bad": 1}}`,
			wantErr: `stdout: patch rejected: the patch {"bad": 1} is bad`},
		{name: "patch from destroy", stdout: `{"patch": {"a": 1}}`, wantErr: `stdout: only notify hooks may write a "patch"`},
		{name: "patch not an object", notify: true, stdout: `{"patch": [1]}`, wantErr: `stdout: "patch" is [1], not a JSON object`},
		{name: "duplicate key", stdout: `{"note": 1, "note": 2}`, wantErr: `stdout: duplicate key "note" at $.note: write each key of an object once`},
		{name: "duplicate patch", notify: true, stdout: `{"patch": {"a": 1}, "patch": {"b": 1}}`, wantErr: `stdout: duplicate key "patch" at $.patch`},
		{name: "duplicate key in a patch", notify: true, stdout: `{"patch": {"s": {"a": 1, "a": null}}}`, wantErr: `stdout: duplicate key "a" at $.patch.s.a`},
		{name: "invalid JSON", stdout: `{"a": }`, wantErr: "stdout is not a JSON object: invalid character '}'"},
		{name: "text", stdout: `deleted server\n`, wantErr: `stdout is not a JSON object: starts with "deleted server"`},
		{name: "array", stdout: `[{"a": 1}]`, wantErr: `stdout is not a JSON object: starts with "[{\"a\": 1}]"`},
		{name: "two documents", stdout: `{} {}`, wantErr: "stdout is not a JSON object: invalid character '{' after top-level value"},
		{name: "trailing garbage", stdout: `{"a": 1}\nok\n`, wantErr: "stdout is not a JSON object: invalid character 'o' after top-level value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := Invocation{}
			if tc.notify {
				inv.Handler = "onDestroy"
				inv.CheckPatch = func(p json.RawMessage) error {
					if strings.Contains(string(p), "bad") {
						return fmt.Errorf("the patch %s is bad", p)
					}
					return nil
				}
			}
			res, err := run(t, inv, "printf '"+tc.stdout+"'\n")
			if tc.wantErr != "" {
				he := hookError(t, err)
				if !strings.Contains(he.Reason, tc.wantErr) {
					t.Errorf("Reason = %q, want it to contain %q", he.Reason, tc.wantErr)
				}
				if he.ExitCode != 0 {
					t.Errorf("ExitCode = %d, want 0", he.ExitCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Output) != tc.wantOut || string(res.Patch) != tc.wantPatch {
				t.Errorf("Output, Patch = %q, %q; want %q, %q", res.Output, res.Patch, tc.wantOut, tc.wantPatch)
			}
			if tc.wantPatch == "" && res.Patch != nil {
				t.Errorf("Patch = %q, want nil", res.Patch)
			}
		})
	}
}

func TestRunStdoutLimit(t *testing.T) {
	_, err := run(t, Invocation{MaxStdout: 10}, `printf '{"a": "0123456789"}'`)
	he := hookError(t, err)
	if he.Reason != "stdout is larger than 10 bytes" {
		t.Errorf("Reason = %q", he.Reason)
	}
}

func TestRunExitStatus(t *testing.T) {
	dir := t.TempDir()
	hook := writeHook(t, dir, "C/destroy", "echo cleaning up >&2\nexit 3\n")
	res, err := run(t, Invocation{Hook: hook}, "")
	he := hookError(t, err)
	if want := "hook " + hook + " destroy of abc: exit status 3"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if he.ExitCode != 3 || res.ExitCode != 3 || he.TimedOut || he.Signal != "" {
		t.Errorf("ExitCode %d/%d TimedOut %v Signal %q", he.ExitCode, res.ExitCode, he.TimedOut, he.Signal)
	}
	if he.StderrTail != "cleaning up\n" {
		t.Errorf("StderrTail = %q", he.StderrTail)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Errorf("err does not unwrap to *exec.ExitError")
	}
}

func TestRunSignal(t *testing.T) {
	_, err := run(t, Invocation{}, "kill -USR1 $$\nsleep 1\n")
	he := hookError(t, err)
	if he.Signal != "SIGUSR1" || he.ExitCode != -1 || he.Reason != "killed by signal SIGUSR1" {
		t.Errorf("Signal %q ExitCode %d Reason %q", he.Signal, he.ExitCode, he.Reason)
	}
}

func TestRunNotExecutable(t *testing.T) {
	dir := t.TempDir()
	hook := writeHook(t, dir, "C/destroy", "exit 0\n")
	if err := os.Chmod(hook, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := run(t, Invocation{Hook: hook}, "")
	if want := "hook " + hook + " destroy of abc: not executable"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	if !errors.Is(err, ErrNotExecutable) {
		t.Errorf("err does not wrap ErrNotExecutable")
	}

	_, err = run(t, Invocation{Hook: filepath.Join(dir, "C/missing")}, "")
	if he := hookError(t, err); he.Reason != "not found" {
		t.Errorf("missing hook: Reason = %q", he.Reason)
	}
	_, err = run(t, Invocation{Hook: filepath.Join(dir, "C")}, "")
	if he := hookError(t, err); he.Reason != "not a regular file" {
		t.Errorf("directory: Reason = %q", he.Reason)
	}
	noShebang := filepath.Join(dir, "C/noshebang")
	if err := os.WriteFile(noShebang, []byte("\x00\x01\x02"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = run(t, Invocation{Hook: noShebang}, "")
	if he := hookError(t, err); !strings.HasPrefix(he.Reason, "cannot start: ") {
		t.Errorf("not a program: Reason = %q", he.Reason)
	}
}

func TestRunStderrLines(t *testing.T) {
	var lines []string
	inv := Invocation{Stderr: func(l string) { lines = append(lines, l) }}
	// 200 lines of 40 bytes overflow the 4 KiB tail; the last line has no
	// newline and a CR is dropped.
	res, err := run(t, inv, `
i=0
while [ $i -lt 200 ]; do
	printf 'line %03d .............................\n' $i >&2
	i=$((i+1))
done
printf 'with cr\r\n' >&2
printf 'last' >&2
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 202 || lines[0] != "line 000 ............................." || lines[200] != "with cr" || lines[201] != "last" {
		t.Errorf("got %d lines: first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
	tail := res.StderrTail
	if len(tail) > 4096 || !strings.HasPrefix(tail, "line ") || !strings.HasSuffix(tail, "with cr\r\nlast") {
		t.Errorf("tail (%d bytes) = %q...%q", len(tail), tail[:min(len(tail), 20)], tail[max(0, len(tail)-20):])
	}
}

func TestRunEmptyStdinAndNilEnv(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	hook := writeHook(t, dir, "C/destroy", `/bin/cat >"`+out+`"; /usr/bin/env >>"`+out+`"`)
	res, err := Run(context.Background(), Invocation{Hook: hook, ObjectID: "x"})
	if err != nil {
		t.Fatal(err, res.StderrTail)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasPrefix(l, "OBJGC_") && !strings.HasPrefix(l, "PWD=") {
			t.Errorf("unexpected line with nil Env and Stdin: %q", l)
		}
	}
}

func TestRunRelativePaths(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	hook := writeHook(t, dir, "C/destroy", `printf '%s\n' "$OBJGC_DOOMED" "$OBJGC_PACKAGE_DIR" "$(pwd -P)" >"`+out+`"`)
	// Relative to the test's working directory, the package directory.
	_, err := Run(context.Background(), Invocation{Hook: hook, ObjectID: "x", Doomed: "doomed", PackageDir: "."})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	real, _ := filepath.EvalSymlinks(wd)
	if want := filepath.Join(wd, "doomed") + "\n" + wd + "\n" + real + "\n"; string(b) != want {
		t.Errorf("hook saw %q, want %q", b, want)
	}
}

// liveGroupMembers lists the processes of group pgid that are not zombies.
func liveGroupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// alive reports whether pid is a process that is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return f[0] != "Z" && f[0] != "X"
}

// assertGroupGone checks, allowing 1s for SIGKILL to land, that nothing
// of the hook's process group is left, including the pids it wrote.
func assertGroupGone(t *testing.T, pgid int, pidFiles ...string) {
	t.Helper()
	var pids []int
	for _, f := range pidFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("hook did not write its pid: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	deadline := time.Now().Add(10 * time.Second) // a bound on a busy machine; it returns as soon as they are gone
	for {
		var left []int
		for _, pid := range pids {
			if alive(pid) {
				left = append(left, pid)
			}
		}
		left = append(left, liveGroupMembers(t, pgid)...)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes %v of group %d survive", left, pgid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunTimeoutIgnoringSIGTERM(t *testing.T) {
	dir := t.TempDir()
	leader, child := filepath.Join(dir, "leader.pid"), filepath.Join(dir, "child.pid")
	var lines []string
	inv := Invocation{Timeout: 300 * time.Millisecond, Grace: 300 * time.Millisecond,
		Stderr: func(l string) { lines = append(lines, l) }}
	res, err := run(t, inv, `
trap '' TERM
echo $$ >"`+leader+`"
sleep 30 &
echo $! >"`+child+`"
echo started >&2
wait
`)
	he := hookError(t, err)
	if !he.TimedOut || he.Signal != "SIGKILL" || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("TimedOut %v Signal %q, errors.Is DeadlineExceeded %v", he.TimedOut, he.Signal, errors.Is(err, context.DeadlineExceeded))
	}
	if want := "timed out after 300ms, process group killed"; he.Reason != want {
		t.Errorf("Reason = %q, want %q", he.Reason, want)
	}
	// A lower bound: timers never fire early, so a slow machine cannot
	// fail it; it shows the grace period passed before the SIGKILL.
	if res.Duration < 600*time.Millisecond {
		t.Errorf("Duration = %v, want at least timeout+grace", res.Duration)
	}
	if len(lines) != 1 || he.StderrTail != "started\n" {
		t.Errorf("stderr lines %q, tail %q", lines, he.StderrTail)
	}
	assertGroupGone(t, res.Pid, leader, child)
}

func TestRunTimeoutNeverExits(t *testing.T) {
	dir := t.TempDir()
	leader := filepath.Join(dir, "leader.pid")
	res, err := run(t, Invocation{Timeout: 200 * time.Millisecond, Grace: 5 * time.Second},
		"echo $$ >\""+leader+"\"\nwhile :; do sleep 1; done\n")
	he := hookError(t, err)
	// SIGTERM is enough: the grace period is not waited out.
	if !he.TimedOut || he.Signal != "SIGTERM" || he.Reason != "timed out after 200ms, process group terminated" {
		t.Errorf("TimedOut %v Signal %q Reason %q", he.TimedOut, he.Signal, he.Reason)
	}
	assertGroupGone(t, res.Pid, leader)
}

func TestRunCancel(t *testing.T) {
	dir := t.TempDir()
	leader := filepath.Join(dir, "leader.pid")
	hook := writeHook(t, dir, "C/destroy", "echo $$ >\""+leader+"\"\nsleep 30\n")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	res, err := Run(ctx, Invocation{Hook: hook, ObjectID: "abc", Env: os.Environ(), Grace: 300 * time.Millisecond})
	he := hookError(t, err)
	if he.TimedOut || !errors.Is(err, context.Canceled) || !strings.HasPrefix(he.Reason, "interrupted (context canceled), process group") {
		t.Errorf("TimedOut %v Reason %q", he.TimedOut, he.Reason)
	}
	assertGroupGone(t, res.Pid, leader)

	// A context done before Run starts nothing.
	res, err = Run(ctx, Invocation{Hook: hook, ObjectID: "abc"})
	if he := hookError(t, err); he.Reason != "not started: context canceled" || res.Pid != 0 {
		t.Errorf("Reason %q Pid %d", he.Reason, res.Pid)
	}
}

func TestRunGrandchildHoldsStdout(t *testing.T) {
	dir := t.TempDir()
	child := filepath.Join(dir, "child.pid")
	// The hook exits 0 at once, but a background process keeps its stdout
	// open (and ignores SIGTERM).
	res, err := run(t, Invocation{Grace: 300 * time.Millisecond},
		"(trap '' TERM; exec sleep 30) &\necho $! >\""+child+"\"\nexit 0\n")
	he := hookError(t, err)
	if !errors.Is(err, exec.ErrWaitDelay) || he.ExitCode != 0 || !strings.Contains(he.Reason, "kept its stdout or stderr open") {
		t.Errorf("ExitCode %d Reason %q, err %v", he.ExitCode, he.Reason, err)
	}
	assertGroupGone(t, res.Pid, child)
}

func TestRunTimeoutGrandchildHoldsStdout(t *testing.T) {
	dir := t.TempDir()
	child := filepath.Join(dir, "child.pid")
	// The hook dies on SIGTERM; its child ignores it and holds stdout.
	res, err := run(t, Invocation{Timeout: 200 * time.Millisecond, Grace: 300 * time.Millisecond},
		"(trap '' TERM; exec sleep 30) &\necho $! >\""+child+"\"\nsleep 30\n")
	he := hookError(t, err)
	if !he.TimedOut || he.Reason != "timed out after 200ms, process group killed" {
		t.Errorf("TimedOut %v Reason %q", he.TimedOut, he.Reason)
	}
	assertGroupGone(t, res.Pid, child)
}

func TestRunTimeoutGrandchildRedirected(t *testing.T) {
	dir := t.TempDir()
	child := filepath.Join(dir, "child.pid")
	ready := filepath.Join(dir, "ready")
	// The grandchild ignores SIGTERM but does not hold the hook's output:
	// Run still waits for it and kills it after the grace period. The hook
	// waits until the grandchild ignores SIGTERM, and the timeout leaves a
	// loaded machine time for that, so that SIGTERM never comes first.
	res, err := run(t, Invocation{Timeout: time.Second, Grace: 300 * time.Millisecond},
		"(trap '' TERM; : >\""+ready+"\"; exec sleep 30) >/dev/null 2>&1 &\necho $! >\""+child+"\"\n"+
			"while [ ! -e \""+ready+"\" ]; do sleep 0.01; done\nsleep 30\n")
	he := hookError(t, err)
	if !he.TimedOut || he.Reason != "timed out after 1s, process group killed" {
		t.Errorf("TimedOut %v Reason %q", he.TimedOut, he.Reason)
	}
	assertGroupGone(t, res.Pid, child)
}

func TestHookErrorQuotes(t *testing.T) {
	err := &HookError{Hook: "/h/a b/destroy", Event: "destroy", ObjectID: "x", Reason: "exit status 1"}
	if want := `hook "/h/a b/destroy" destroy of x: exit status 1`; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	err = &HookError{Hook: "/h/S/notify/on gone", Event: "notify", Handler: "on gone", ObjectID: "x", Reason: "exit status 1"}
	if want := `hook "/h/S/notify/on gone" notify "on gone" of x: exit status 1`; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

// TestVariablesAreWhatRunSets keeps Variables, which objgc run by a hook
// does not warn about, the list of what a hook's environment gets.
func TestVariablesAreWhatRunSets(t *testing.T) {
	inv := &Invocation{Hook: "/h", ObjectID: "x"}
	var got []string
	for _, kv := range inv.env() {
		name, _, _ := strings.Cut(kv, "=")
		got = append(got, name)
	}
	if !slices.Equal(got, Variables) {
		t.Errorf("env() sets %v, Variables is %v", got, Variables)
	}
}
