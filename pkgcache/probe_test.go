package pkgcache

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/objgc/objgc/internal/lockfile"
)

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

// TestReadDigestsHeader: the header comes from the record's first 4 KiB,
// whether the file list starts inside them or the record is short, and
// from the whole record when the header itself is longer.
func TestReadDigestsHeader(t *testing.T) {
	manyFiles := `"files": {` + strings.Repeat(`"f": "0", `, 1000) + `"g": "1"}`
	for name, body := range map[string]string{
		"short":       `{"full_name": "p", "installed": "2026-01-02T03:04:05Z", "size": 42, "files": {}}`,
		"long list":   `{"full_name": "p", "installed": "2026-01-02T03:04:05Z", "size": 42, ` + manyFiles + `}`,
		"long header": `{"full_name": "p", "pad": "` + strings.Repeat("x", 5000) + `", "installed": "2026-01-02T03:04:05Z", "size": 42, ` + manyFiles + `}`,
	} {
		c := openCache(t)
		if err := os.MkdirAll(c.recordsDir(), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(c.recordPath("x"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		rec, err := c.readRecordHeader("x")
		if err != nil || rec.Size != 42 || rec.Installed.Format("2006-01-02T15:04:05Z07:00") != "2026-01-02T03:04:05Z" {
			t.Errorf("%s: %+v, %v", name, rec, err)
		}
	}
}

// TestLockFileLinkRefused: a symbolic link at a usage lock path (someone
// else's file, or nothing) is never followed: acquireUsage fails with
// lockfile.ErrNotRegular naming the path, and nothing is created at the
// link's target.
func TestLockFileLinkRefused(t *testing.T) {
	c := openCache(t)
	id := strings.Repeat("ab", 32)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.Symlink(victim, c.usageLockPath(id)); err != nil {
		t.Skip("no symbolic links:", err)
	}
	_, err := c.acquireUsage(context.Background(), id)
	if !errors.Is(err, lockfile.ErrNotRegular) || !strings.Contains(err.Error(), c.usageLockPath(id)) {
		t.Errorf("acquireUsage through a link: %v, want ErrNotRegular naming the lock file", err)
	}
	if _, err := os.Lstat(victim); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the link's target was created: %v", err)
	}
	if !c.inUse(id) {
		t.Error("a lock path that cannot be probed must count as in use")
	}
}
