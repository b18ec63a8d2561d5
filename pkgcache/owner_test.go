//go:build linux

package pkgcache

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const nobody = 65534

// uidOf returns the owner of path (not following a link).
func uidOf(t *testing.T, path string) int {
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return int(st.Sys().(*syscall.Stat_t).Uid)
}

// Root on a cache that belongs to another user (the engine's, here uid
// 65534) gives everything it creates there to that user: lock files,
// .objgc/ and what is in it, every file of the package it adds.
func TestOwnerRootGivesAway(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	root := filepath.Join(t.TempDir(), "cache")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(root, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	c, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e := addZip(t, c, zipPackage(t, testPkg("com.example.databases.MySql"), nil)).Entry
	s := c.NewSession()
	if _, err := s.Package(ctx, e.FullName, ""); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := c.Prune(ctx, PruneOptions{Outdated: true}); err != nil {
		t.Fatal(err)
	}
	n := 0
	filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if uid := uidOf(t, p); uid != nobody {
			t.Errorf("%s belongs to uid %d, not to the cache's owner %d", p, uid, nobody)
		}
		n++
		return nil
	})
	if n < 8 {
		t.Errorf("only %d names under the cache: nothing was tested", n)
	}
}

// Anyone else on another user's cache is refused before anything is
// created, with the owner named and how to run as that user. The test
// runs a copy of this test binary as uid 65534 on a cache of root's.
func TestOwnerOtherUserRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a process as another user")
	}
	dir, err := os.MkdirTemp("", "objgc-owner-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "pkgcache.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	src := writeFile(t, dir, "mysql.zip", zipPackage(t, testPkg("com.example.databases.MySql"), nil))
	root := filepath.Join(dir, "cache")
	// Writable by all, sticky as /tmp (a root writable without the
	// sticky bit is refused to all): only the owner rule stops it.
	if err := os.Mkdir(root, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(root, 0o777|os.ModeSticky)
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), "PKGCACHE_HELPER=openadd", "PKGCACHE_ROOT="+root, "PKGCACHE_SOURCES="+src, "HOME="+dir, "GOCOVERDIR=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	want := "package cache " + root + " belongs to root (uid 0), not to uid 65534"
	if err == nil || !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "sudo -u root objgc") {
		t.Errorf("add as uid 65534: %v\n%s\nwant an error containing %q", err, &stderr, want)
	}
	if names := dirNames(t, root); len(names) != 0 {
		t.Errorf("the refused add created %v", names)
	}
}
