//go:build unix

package hook

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// bigDocument is a stdin document larger than a pipe's buffer (64 KiB).
func bigDocument() []byte {
	return []byte(`{"event":"destroy","object":{"?":{"id":"abc"},"blob":"` + strings.Repeat("x", 300<<10) + `"}}`)
}

func TestRunStdinNeverRead(t *testing.T) {
	// A hook that never reads a document larger than a pipe's buffer
	// succeeds: it is not blocked, and objgc is not either.
	if _, err := run(t, Invocation{Stdin: bigDocument()}, "exit 0\n"); err != nil {
		t.Fatal(err)
	}
}

func TestRunStdoutLarge(t *testing.T) {
	// 256 KiB of stdout, more than a pipe holds, all of it kept; one
	// byte over the limit fails the hook.
	body := `printf '{"a": "'; head -c 262131 /dev/zero | tr '\0' x; printf '"}'` + "\n"
	res, err := run(t, Invocation{MaxStdout: 262140}, body)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stdout) != 262140 || len(res.Output) != 262140 {
		t.Errorf("got %d bytes of stdout, output %d, want 262140", len(res.Stdout), len(res.Output))
	}
	res, err = run(t, Invocation{MaxStdout: 262139}, body)
	if he := hookError(t, err); he.Reason != "stdout is larger than 262139 bytes" || len(res.Stdout) != 262139 {
		t.Errorf("Reason %q, %d bytes kept", he.Reason, len(res.Stdout))
	}
}

func TestRunGrandchildHoldsOnlyStdout(t *testing.T) {
	dir := t.TempDir()
	child := dir + "/child.pid"
	// The background process gave up stderr but keeps stdout: the hook's
	// output is not complete until it closes, so it gets the grace period,
	// then its group is killed and the hook fails.
	res, err := run(t, Invocation{Grace: 300 * time.Millisecond},
		"(trap '' TERM; exec sleep 30) 2>/dev/null &\necho $! >\""+child+"\"\nexit 0\n")
	he := hookError(t, err)
	if !errors.Is(err, exec.ErrWaitDelay) || he.ExitCode != 0 || !strings.Contains(he.Reason, "kept its stdout or stderr open") {
		t.Errorf("ExitCode %d Reason %q, err %v", he.ExitCode, he.Reason, err)
	}
	assertGroupGone(t, res.Pid, child)
}

func TestRunStdinPipeFallback(t *testing.T) {
	stdinPipe = true
	defer func() { stdinPipe = false }()
	// Through a pipe the hook reads the whole document, and one that never
	// reads it succeeds.
	res, err := run(t, Invocation{Stdin: bigDocument()}, "wc -c\n")
	if err == nil || !strings.Contains(err.Error(), "stdout is not a JSON object") || strings.TrimSpace(string(res.Stdout)) != strconv.Itoa(len(bigDocument())) {
		t.Errorf("stdout %q, err %v; want the document's length", res.Stdout, err)
	}
	if _, err := run(t, Invocation{Stdin: bigDocument()}, "exit 0\n"); err != nil {
		t.Fatal(err)
	}
	// A background process holds stdin without reading it (fd 3 keeps it
	// from sh's /dev/null for background lists), and not the hook's output: the document cannot all be written, and Run gives up
	// after the grace period instead of waiting for it.
	dir := t.TempDir()
	child := dir + "/child.pid"
	res, err = run(t, Invocation{Stdin: bigDocument(), Grace: 300 * time.Millisecond},
		"exec 3<&0\n(exec sleep 30 <&3 3<&-) >/dev/null 2>&1 &\necho $! >\""+child+"\"\nexit 0\n")
	if !errors.Is(err, exec.ErrWaitDelay) {
		t.Errorf("err = %v, want one wrapping exec.ErrWaitDelay", err)
	}
	assertGroupGone(t, res.Pid, child)
}
