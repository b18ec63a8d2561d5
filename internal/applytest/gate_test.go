package applytest

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// answered waits up to d until objgc has ended (ended closed) or said on
// stderr that it was interrupted, and reports whether either came.
func answered(ended <-chan struct{}, stderr *syncBuffer, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		select {
		case <-ended:
			return true
		default:
		}
		if strings.Contains(stderr.String(), "objgc: interrupted") {
			return true
		}
		time.Sleep(time.Millisecond) // polling objgc's output, not timing it
	}
	return false
}

// syncBuffer is a strings.Builder that the goroutine copying a process's
// output writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// openGate removes gate, which lets the hooks that wait on it go on, and
// waits up to a minute for objgc (c, whose end closes ended) to end. A
// hang kills it and fails the test, with its stderr.
func openGate(t *testing.T, gate string, c *exec.Cmd, ended <-chan struct{}, stderr *syncBuffer) {
	t.Helper()
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(time.Minute): // a hang, not a measurement
		c.Process.Kill()
		<-ended
		t.Fatalf("objgc did not end within a minute of opening the gate\nstderr:\n%s", stderr)
	}
}
