//go:build linux

package pkgcache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// throwawayUser adds a system user for the test (useradd) and removes it
// when the test ends; it returns its uid and gid. It skips, saying why,
// when the test does not run as root.
func throwawayUser(t *testing.T) (uid, gid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: it adds a throw-away user with useradd and acts on that user's cache as root")
	}
	var b [4]byte
	rand.Read(b[:])
	name := "objgct" + hex.EncodeToString(b[:])
	if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() { exec.Command("userdel", name).Run() })
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// TestMigrateAsRootGivesToOwner: root migrates a cache that belongs to
// another user (the engine's), whose packages an earlier objgc run as
// root left owned by root. Everything migrate leaves in the engine's
// layout (package directories and files, records, last-use markers, lock
// files, .objgc/) belongs to the cache's owner: the engine's cleanup
// ignores rmtree errors, so a package it could not delete would stay for
// ever.
func TestMigrateAsRootGivesToOwner(t *testing.T) {
	uid, gid := throwawayUser(t)
	c := openCache(t)
	es := addThree(t, c)
	earlierLayout(t, c, es, false)
	if err := os.Chown(c.Root(), uid, gid); err != nil {
		t.Fatal(err)
	}
	m, err := OpenForMigrate(c.Root())
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Migrate(context.Background())
	if err != nil || len(res.Moved) != len(es) || !res.Done() {
		t.Fatalf("Migrate = %+v, %v", res, err)
	}
	n := 0
	filepath.WalkDir(c.Root(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if int(st.Uid) != uid || int(st.Gid) != gid {
			t.Errorf("%s belongs to %d:%d after root's migrate, want the cache owner's %d:%d", p, st.Uid, st.Gid, uid, gid)
		}
		n++
		return nil
	})
	for _, e := range es {
		if !isDir(e.Dir) {
			t.Errorf("%s not migrated", e.Dir)
		}
	}
	t.Logf("%d names checked", n)
}
