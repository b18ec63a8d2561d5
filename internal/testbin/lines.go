package testbin

import (
	"bufio"
	"io"
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
}

// Do sends command and returns the answer line ("EOF" when the process
// closed its output), failing the test when none comes within Limit.
func (l *Lines) Do(command string) string {
	l.T.Helper()
	if _, err := io.WriteString(l.In, command+"\n"); err != nil {
		l.T.Fatalf("%s %s: %v", l.Name, command, err)
	}
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
