//go:build unix

package inputfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFIFORefusedWithoutWaiting: a named pipe with no writer is refused by
// Check and by Open, and Open does not wait for a writer.
func TestFIFORefusedWithoutWaiting(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	if _, err := Check(p); !errors.Is(err, ErrNotRegular) || err.Error() != p+": is a named pipe, not a regular file" {
		t.Errorf("Check: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		f, _, err := Open(p)
		if f != nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("Open: %v, want ErrNotRegular", err)
		}
	case <-time.After(10 * time.Second): // a hang, not a measurement
		t.Fatal("Open waited for a writer of the pipe")
	}
}

// TestRegularAndDirectory: a regular file opens, blocking again; a
// directory passes Check (callers decide).
func TestRegularAndDirectory(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.json")
	if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, st, err := Open(p)
	if err != nil || st.Size() != 2 {
		t.Fatalf("Open: %v %v", st, err)
	}
	defer f.Close()
	if _, err := Check(dir); err != nil {
		t.Errorf("Check(dir): %v", err)
	}
	if _, err := Check(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Check(missing): %v", err)
	}
}
