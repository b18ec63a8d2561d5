//go:build unix

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestShowReadsOnlyThePlan: objgc show reads nothing but the plan file,
// so a plan whose model became a 50 GB file is shown at once; show
// --check, which reads the inputs as apply would, and show of a plan on
// a standard input that never ends, stop at the first SIGINT or SIGTERM
// with exit 130. objgc is a real process (this test binary run as
// "objgc", see TestMain).
func TestShowReadsOnlyThePlan(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.json")
	data, err := os.ReadFile(filepath.Join("testdata", "pairs", "app-removed.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "p.json")
	if out, err := objgcCommand("plan", "--no-hooks", "--cache-dir", filepath.Join(dir, "cache"), "--out", plan, model).CombinedOutput(); err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	// Sparse: 50 GB to read, nothing on disk.
	if err := os.Truncate(model, 50<<30); err != nil {
		t.Fatal(err)
	}

	show := objgcCommand("show", plan)
	var stderr bytes.Buffer
	show.Stderr = &stderr
	if code := waitExit(t, show, 0, 0); code != 0 {
		t.Fatalf("show: exit %d: %s", code, &stderr)
	}

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("check-"+sig.String(), func(t *testing.T) {
			c := objgcCommand("show", "--check", plan)
			var stderr bytes.Buffer
			c.Stderr = &stderr
			if code := waitExit(t, c, sig, 300*time.Millisecond); code != 130 {
				t.Errorf("show --check: exit %d, want 130: %s", code, &stderr)
			}
		})
		t.Run("stdin-"+sig.String(), func(t *testing.T) {
			c := objgcCommand("show", "-")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			c.Stdin = r
			// The start of a plan, and never more.
			if _, err := w.Write([]byte(`{"format_version": "3", "inputs": [`)); err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			c.Stderr = &stderr
			if code := waitExit(t, c, sig, 300*time.Millisecond); code != 130 {
				t.Errorf("show -: exit %d, want 130: %s", code, &stderr)
			}
			if !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("stderr %q does not say interrupted", &stderr)
			}
		})
	}
}

// objgcCommand is objgc args as a real process.
func objgcCommand(args ...string) *exec.Cmd {
	c := exec.Command(os.Args[0], args...)
	c.Args[0] = "objgc"
	return c
}

// waitExit starts c and returns its exit status: when sig is not 0, after
// sending it sig once c has had settle to start waiting. A run that does
// not end within 30 s is a hang, not a measurement: killed, failed. The
// failures show c's stderr when it is a buffer.
func waitExit(t *testing.T, c *exec.Cmd, sig syscall.Signal, settle time.Duration) int {
	t.Helper()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if f, ok := c.Stdin.(*os.File); ok {
		f.Close() // the child's now
	}
	output := func() any {
		if s, ok := c.Stderr.(fmt.Stringer); ok {
			return s
		}
		return ""
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	if sig != 0 {
		select {
		case err := <-exited:
			t.Fatalf("objgc %s exited before the signal: %v\n%s", strings.Join(c.Args[1:], " "), err, output())
		case <-time.After(settle):
		}
		if err := c.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	select {
	case err = <-exited:
	case <-time.After(30 * time.Second):
		c.Process.Kill()
		<-exited
		t.Fatalf("objgc %s did not end within 30 s\n%s", strings.Join(c.Args[1:], " "), output())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}
