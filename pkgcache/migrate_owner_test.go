//go:build linux

package pkgcache

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/objgc/objgc/internal/testuser"
)

// TestMigrateAsRootGivesToOwner: root migrates a cache that belongs to
// another user (the engine's), whose packages an earlier objgc run as
// root left owned by root. Everything migrate leaves in the engine's
// layout (package directories and files, records, last-use markers, lock
// files, .objgc/) belongs to the cache's owner: the engine's cleanup
// ignores rmtree errors, so a package it could not delete would stay for
// ever.
func TestMigrateAsRootGivesToOwner(t *testing.T) {
	_, uid, gid := testuser.Throwaway(t, "root's migrate of another user's cache")
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
