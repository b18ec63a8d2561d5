package lockfile

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHeld: a missing lock file is free and stays missing; a free one is
// free; one held shared or exclusively through Lock (another open file
// description, as another process would have) is held, and free again
// once released. (Moved from pkgcache's probe test.)
func TestHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.usage")
	if Held(path) {
		t.Error("missing lock file reported held")
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("probe created the lock file: %v", err)
	}
	for _, mode := range []Mode{Shared, Exclusive} {
		unlock, err := Lock(context.Background(), path, mode)
		if err != nil {
			t.Fatal(err)
		}
		if !Held(path) {
			t.Errorf("lock held (mode %v) reported free", mode)
		}
		unlock()
		if Held(path) {
			t.Errorf("released lock (mode %v) reported held", mode)
		}
	}
}

// TestSharedAndExclusive: two shared holders at once; an exclusive request
// fails without waiting (TryLockPath) and, with a context that ends, fails
// with an error wrapping ErrLocked and the context's error; once the shared
// holders are gone it succeeds.
func TestSharedAndExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l")
	u1, err := Lock(context.Background(), path, Shared)
	if err != nil {
		t.Fatal(err)
	}
	u2, err := TryLockPath(path, Shared)
	if err != nil || u2 == nil {
		t.Fatalf("second shared lock: %v, %v", u2 != nil, err)
	}
	if u, err := TryLockPath(path, Exclusive); u != nil || err != nil {
		t.Fatalf("exclusive under shared: taken %v, %v", u != nil, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*PollInterval)
	defer cancel()
	_, err = Lock(ctx, path, Exclusive)
	if !errors.Is(err, ErrLocked) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), path) {
		t.Fatalf("exclusive with ending context: %v", err)
	}
	u1()
	u2()
	u, err := TryLockPath(path, Exclusive)
	if err != nil || u == nil {
		t.Fatalf("exclusive once free: %v, %v", u != nil, err)
	}
	u()
}

// TestWaitTakesReleasedLock: Wait returns once the holder releases, before
// its context ends.
func TestWaitTakesReleasedLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l")
	u, err := TryLockPath(path, Exclusive)
	if err != nil || u == nil {
		t.Fatal(err)
	}
	f, err := Open("lock file", path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ok, err := TryLock(f, Shared)
	if ok || err != nil {
		t.Fatalf("shared under exclusive: %v, %v", ok, err)
	}
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() { done <- Wait(ctx, f, Shared) }()
	u()
	if err := <-done; err != nil {
		t.Fatalf("Wait after release: %v", err)
	}
}

// TestOpenRefusesNonRegular: a symbolic link (even to a regular file) and
// a directory are refused with ErrNotRegular naming the path; nothing is
// created through a dangling link.
func TestOpenRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.WriteFile(real, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symbolic links:", err)
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, dangling, dir} {
		_, err := Open("lock file", p, os.O_RDWR|os.O_CREATE, 0o644)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "lock file "+p+" is ") {
			t.Errorf("%s: %v, want ErrNotRegular naming it", p, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("open through a dangling link created its target: %v", err)
	}
}
