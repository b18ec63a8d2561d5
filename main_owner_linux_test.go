package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/objgc/objgc/internal/testuser"
)

// openTempDir is a temporary directory every user can traverse (a test's
// own is 0700), so that a process that became another user reaches what
// is under it.
func openTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func chownTree(t *testing.T, dir string, uid, gid int) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		return os.Lchown(p, uid, gid)
	})
}

func ownerOf(t *testing.T, p string) int {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return int(st.Sys().(*syscall.Stat_t).Uid)
}

// Root's cache commands on a cache that belongs to another user do the
// work as that user: root's prune cannot delete a file of root's that the
// owner put in the cache (here in .objgc/trash/, which prune empties),
// though root alone could; root's cache add of an archive only root can
// read works, and what it creates belongs to the owner; root's plan
// writes nothing there but lock files.
func TestRootActsAsCacheOwner(t *testing.T) {
	name, uid, gid := testuser.Throwaway(t, "root's cache commands on a user's cache")
	base := openTempDir(t)
	root, _ := engineCache(t)
	cache := filepath.Join(base, "cache")
	if err := os.Rename(root, cache); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cache, ".objgc", "trash"), 0o755); err != nil {
		t.Fatal(err)
	}
	chownTree(t, cache, uid, gid)
	// What the owner could not delete alone: root's own directory, with
	// a file, in the trash.
	victim := filepath.Join(cache, ".objgc", "trash", "rootsown")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	precious := filepath.Join(victim, "precious")
	if err := os.WriteFile(precious, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}

	code, out := runObjgc(t, 0, "cache", "prune", "--cache-dir", cache, "--outdated")
	if code != 0 {
		t.Errorf("cache prune: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(precious); err != nil {
		t.Errorf("root's prune on %s's cache deleted %s: %v", name, precious, err)
	}

	// plan as root keeps root's rights, and writes nothing there but
	// the lock protocol's files: no last-use marker.
	code, out = runObjgc(t, 0, "plan", "--cache-dir", cache, mysqlModel(t))
	if code != 0 || strings.Contains(out, "hierarchy_incomplete") {
		t.Errorf("plan: exit %d\n%s", code, out)
	}
	if _, err := os.Lstat(filepath.Join(cache, ".objgc", "lastuse")); err == nil {
		t.Errorf("root's plan wrote last-use markers in %s's cache", name)
	}

	// An archive only root can read.
	secret := filepath.Join(t.TempDir(), "tomcat")
	if err := os.CopyFS(secret, os.DirFS(filepath.Join("pkgcache", "testdata", "packages", "com.example.apache.Tomcat"))); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(secret), 0o700)
	code, out = runObjgc(t, 0, "cache", "add", "--cache-dir", cache, secret)
	if code != 0 {
		t.Errorf("cache add of a source only root reads: exit %d\n%s", code, out)
	}
	n := 0
	filepath.WalkDir(cache, func(p string, _ fs.DirEntry, err error) error {
		if err != nil || strings.HasPrefix(p, victim) {
			return nil
		}
		if o := ownerOf(t, p); o != uid {
			t.Errorf("%s belongs to uid %d, not to the cache's owner %s (%d)", p, o, name, uid)
		}
		n++
		return nil
	})
	if n < 10 {
		t.Errorf("only %d names in the cache: the add did nothing", n)
	}
}

// A cache root that users other than its owner and root may write (group
// or other write, no sticky bit) is refused by every command.
func TestCacheRootWritableByOthersRefused(t *testing.T) {
	root, _ := engineCache(t)
	if err := os.Chmod(root, 0o775); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"cache", "list", "--cache-dir", root},
		{"cache", "prune", "--cache-dir", root, "--outdated"},
		{"plan", "--cache-dir", root, mysqlModel(t)},
	} {
		code, out := runObjgc(t, 0, args...)
		if code != 1 || !strings.Contains(out, "writable by other users") || !strings.Contains(out, root) {
			t.Errorf("objgc %v: exit %d, want 1 and the root refused\n%s", args, code, out)
		}
	}
}
