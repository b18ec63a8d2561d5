package journal

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// helperEnv makes the test binary a helper process instead of running the
// tests: "journal-append:<path>" (journalAppendHelper). A crash is tested
// by killing a real process that writes the journal.
const helperEnv = "OBJGC_JOURNAL_TEST_HELPER"

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		mode, arg, _ := strings.Cut(h, ":")
		if mode == "journal-append" {
			os.Exit(journalAppendHelper(arg))
		}
		fmt.Fprintf(os.Stderr, "unknown %s mode %q\n", helperEnv, mode)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// helper is a running helper process.
type helper struct {
	cmd *exec.Cmd
	out *bufio.Reader
}

func startHelper(t *testing.T, mode, arg string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// GORACE: the race runtime otherwise sleeps a second at exit.
	cmd.Env = append(os.Environ(), helperEnv+"="+mode+":"+arg, "GORACE=atexit_sleep_ms=0")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, out: bufio.NewReader(stdout)}
	t.Cleanup(func() {
		h.cmd.Process.Kill()
		h.cmd.Wait()
	})
	return h
}

// expect reads the helper's next line of output and fails unless it is
// want.
func (h *helper) expect(t *testing.T, want string) {
	t.Helper()
	line, err := h.out.ReadString('\n')
	if strings.TrimSpace(line) != want {
		t.Fatalf("helper said %q (%v), want %q", line, err, want)
	}
}

// HookEnded writes a hook run's result (EndHook without the Seq).
func (j *Journal) HookEnded(k HookKey, res HookResult) error {
	_, err := j.EndHook(k, res)
	return err
}

// States returns every lifecycle state a journal may hold, in lifecycle
// order.
func States() []State {
	return []State{StateAlive, StateDoomed, StateNotified, StateDestroying,
		StateDestroyed, stateRemoved, StateFailed}
}

// within runs f in a goroutine and fails the test if it has not returned
// within d (the test's own bound on a call that must not block; it is not
// a measurement).
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s still blocked after %s", what, d)
	}
}
