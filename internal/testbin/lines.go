package testbin

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Lines is a conversation with a helper process that answers each
// command line on its standard input with one line on its standard
// output (the Python stand-ins of murano-engine and of its lock users).
type Lines struct {
	T     *testing.T
	In    io.Writer      // the process's standard input
	Out   *bufio.Scanner // the process's standard output
	Limit time.Duration  // how long an answer may take
	Name  string         // the process, in failures
	Pid   int            // the process's, when StartLines started it
}

// StartLines starts cmd, a helper process that answers command lines,
// and returns the conversation with it (name in failures, limit on each
// answer). When the test ends, the helper's standard input is closed
// and it is waited for, killed after 10 s; when the test failed, the
// last 30 lines of its stderr are logged.
func StartLines(t *testing.T, cmd *exec.Cmd, name string, limit time.Duration) *Lines {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, stdout := startPiped(t, cmd)
	t.Cleanup(func() {
		stdin.Close()
		kill := time.AfterFunc(10*time.Second, func() { cmd.Process.Kill() })
		cmd.Wait()
		kill.Stop()
		if t.Failed() {
			t.Logf("%s's stderr:\n%s", name, lastLines(stderr.String(), 30))
		}
	})
	return &Lines{T: t, In: stdin, Out: bufio.NewScanner(stdout), Limit: limit, Name: name, Pid: cmd.Process.Pid}
}

// startPiped starts cmd with pipes to its standard input and from its
// standard output, failing the test when it cannot.
func startPiped(t *testing.T, cmd *exec.Cmd) (io.WriteCloser, io.Reader) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, stdout
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Do sends command and returns the answer line ("EOF" when the process
// closed its output), failing the test when none comes within Limit.
func (l *Lines) Do(command string) string {
	l.T.Helper()
	l.Send(command)
	return l.Next(command)
}

// Send sends command without waiting for its answer, for a command the
// helper answers only once the test has done something more.
func (l *Lines) Send(command string) {
	l.T.Helper()
	if _, err := io.WriteString(l.In, command+"\n"); err != nil {
		l.T.Fatalf("%s %s: %v", l.Name, command, err)
	}
}

// Next returns the next answer line ("EOF" when the process closed its
// output), the answer to command, failing the test when none comes
// within Limit.
func (l *Lines) Next(command string) string {
	l.T.Helper()
	answer := make(chan string, 1)
	go func() {
		if l.Out.Scan() {
			answer <- l.Out.Text()
		} else {
			answer <- "EOF"
		}
	}()
	select {
	case a := <-answer:
		return a
	case <-time.After(l.Limit):
		l.T.Fatalf("%s %s: no answer", l.Name, command)
		return ""
	}
}
