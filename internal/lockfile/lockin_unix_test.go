//go:build unix

package lockfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Beneath a directory handle (LockIn, LockAt, HeldIn, HeldAt), a link at
// the lock file's name is refused, never followed, a FIFO never waited
// on, and the locks exclude each other as Lock's do.
func TestLockBeneathHandle(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(outside, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.lock")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.lock"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d, err := r.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, name := range []string{"link.lock", "fifo.lock"} {
		path := filepath.Join(dir, name)
		if _, err := LockIn(ctx, r, name, path, Exclusive); !errors.Is(err, ErrNotRegular) {
			t.Errorf("LockIn(%s): %v; want it refused as not a regular file", name, err)
		}
		if _, err := LockAt(ctx, d, name, path, Exclusive); !errors.Is(err, ErrNotRegular) {
			t.Errorf("LockAt(%s): %v; want it refused as not a regular file", name, err)
		}
		if !HeldIn(r, name) || !HeldAt(d, name) {
			t.Errorf("%s: reported free; anything but a regular file counts as held", name)
		}
	}
	if st, err := os.Stat(outside); err != nil || st.Size() != 0 {
		t.Errorf("the link's target was touched: %v", err)
	}
	unlock, err := LockAt(ctx, d, "u.lock", filepath.Join(dir, "u.lock"), Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if !HeldIn(r, "u.lock") || !HeldAt(d, "u.lock") {
		t.Error("a lock held through LockAt is reported free")
	}
	if u, err := TryLockIn(r, "u.lock", filepath.Join(dir, "u.lock"), Shared); err != nil || u != nil {
		t.Errorf("TryLockIn beside LockAt: %v, %v; want nil, nil (held)", u != nil, err)
	}
	unlock()
	if HeldAt(d, "u.lock") {
		t.Error("a released lock is reported held")
	}
}
