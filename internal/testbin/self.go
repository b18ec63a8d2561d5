package testbin

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Self is the running test binary started again as a helper process
// (StartSelf), for tests that need a second real process: one holding a
// lock, one killed while it writes a file.
type Self struct {
	Cmd   *exec.Cmd
	Stdin io.WriteCloser // the helper's standard input; closing it is a signal to end
	out   *bufio.Reader
}

// StartSelf runs the test binary again with no tests and env=mode:arg
// set, which the package's TestMain turns into the helper called mode;
// the helper's stderr is the test's. The process is killed when the test
// ends.
func StartSelf(t *testing.T, env, mode, arg string) *Self {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// GORACE: the race runtime otherwise sleeps a second at exit.
	cmd.Env = append(os.Environ(), env+"="+mode+":"+arg, "GORACE=atexit_sleep_ms=0")
	cmd.Stderr = os.Stderr
	stdin, stdout := startPiped(t, cmd)
	h := &Self{Cmd: cmd, Stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(func() {
		h.Cmd.Process.Kill()
		h.Cmd.Wait()
	})
	return h
}

// Expect reads the helper's next line of output and fails the test unless
// it is want.
func (h *Self) Expect(t *testing.T, want string) {
	t.Helper()
	line, err := h.out.ReadString('\n')
	if strings.TrimSpace(line) != want {
		t.Fatalf("helper said %q (%v), want %q", line, err, want)
	}
}
