package pkgcache

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockHeld: a missing lock file is free and stays missing; a free one
// is free; one held shared or exclusively through gofrs/flock (another
// open file description, as another process would have) is held, and free
// again once released.
func TestLockHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.usage")
	if lockHeld(path) {
		t.Error("missing lock file reported held")
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("probe created the lock file: %v", err)
	}
	for _, shared := range []bool{true, false} {
		unlock, err := lock(context.Background(), path, shared)
		if err != nil {
			t.Fatal(err)
		}
		if !lockHeld(path) {
			t.Errorf("lock held (shared %v) reported free", shared)
		}
		unlock()
		if lockHeld(path) {
			t.Errorf("released lock (shared %v) reported held", shared)
		}
	}
}

// TestReadHead: the first n bytes, or the whole of a shorter file.
func TestReadHead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	body := strings.Repeat("0123456789", 1000)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 4096, 10000, 20000} {
		got, err := readHead(path, n)
		if err != nil || string(got) != body[:min(n, len(body))] {
			t.Errorf("readHead(%d) = %d bytes, %v", n, len(got), err)
		}
	}
	if _, err := readHead(filepath.Join(t.TempDir(), "none"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
