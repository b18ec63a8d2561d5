//go:build linux

package pkgcache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScanOrphans: a process that has a deleted <id>_usage.lock of the
// cache open (here this one) is found, by id, and nothing else is: a
// usage lock file still there, a deleted file of another name, a deleted
// lock file of another directory. Without a readable /proc the reading
// is not complete and says why.
func TestScanOrphans(t *testing.T) {
	c := openCache(t)
	id, kept := "0a1b2c3d4e5f60718293a4b5c6d7e8f9", "1a1b2c3d4e5f60718293a4b5c6d7e8f9"
	open := func(p string, remove bool) {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_RDONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if remove {
			os.Remove(p)
		}
	}
	open(c.usageLockPath(id), true)
	open(c.usageLockPath(kept), false)
	open(filepath.Join(c.Root(), "notes.txt"), true)
	other := t.TempDir()
	open(filepath.Join(other, id+"_usage.lock"), true)

	s := c.scanOrphans()
	if !s.complete || len(s.held) != 1 || len(s.held[id]) == 0 || s.held[id][0] != os.Getpid() {
		t.Fatalf("scan = %+v", s)
	}
	if !strings.Contains(s.busy(id), "deleted usage lock file open") || s.busy(kept) != "" {
		t.Errorf("busy: %q, %q", s.busy(id), s.busy(kept))
	}

	procRoot = filepath.Join(t.TempDir(), "noproc")
	defer func() { procRoot = "/proc" }()
	if s := c.scanOrphans(); s.complete || !strings.Contains(s.missingWhy(), "usage lock file is missing") || !strings.Contains(s.note(), "not checked") {
		t.Errorf("scan without /proc = %+v", s)
	}
}
