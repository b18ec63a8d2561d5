package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/objgc/objgc/pkgcache"
)

// copyDir copies the package directory src into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPlanShowsPackageHierarchyAndHooks plans a real model against a cache
// holding Murano's real core library (openstack/murano's meta/io.murano,
// reduced and copied into pkgcache/testdata; its README gives the origin) to
// which a destroy hook for an ancestor class was added: the plan shows the
// hierarchy from the class files and the hook from the package.
func TestPlanShowsPackageHierarchyAndHooks(t *testing.T) {
	added := cacheCoreLibrary(t)
	t.Setenv("NO_COLOR", "1")

	code, stdout, stderr := runCmd(t, "", "plan", "../testdata/pairs/app-removed.json")
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	wantHierarchy := "classes: io.murano.resources.LinuxMuranoInstance < io.murano.resources.LinuxInstance < io.murano.resources.Instance"
	if !strings.Contains(stdout, wantHierarchy) {
		t.Errorf("plan does not show the hierarchy %q:\n%s", wantHierarchy, stdout)
	}
	wantHook := "hook destroy: " + filepath.Join(added.Entry.Dir, "hooks", "io.murano.resources.Instance", "destroy")
	if !strings.Contains(stdout, wantHook) {
		t.Errorf("plan does not show the package hook %q:\n%s", wantHook, stdout)
	}
}

// cacheCoreLibrary makes a package cache holding Murano's real core
// library (pkgcache/testdata/packages/io.murano, a copy of the package
// Murano ships) with a destroy hook added for the ancestor class
// io.murano.resources.Instance, and points OBJGC_CACHE_DIR at it. A
// missing fixture fails the test: it is committed.
func cacheCoreLibrary(t *testing.T) pkgcache.AddResult {
	t.Helper()
	src := filepath.Join("..", "pkgcache", "testdata", "packages", "io.murano")
	if _, err := os.Stat(filepath.Join(src, "manifest.yaml")); err != nil {
		t.Fatalf("the core library fixture is missing: %v", err)
	}
	pkgDir := filepath.Join(t.TempDir(), "io.murano")
	copyDir(t, src, pkgDir)
	hookPath := filepath.Join(pkgDir, "hooks", "io.murano.resources.Instance", "destroy")
	if err := os.MkdirAll(filepath.Dir(hookPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hookPath, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cacheRoot := t.TempDir()
	c, err := pkgcache.Open(cacheRoot)
	if err != nil {
		t.Fatal(err)
	}
	added, err := c.Add(context.Background(), pkgDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("OBJGC_CACHE_DIR", cacheRoot)
	return added
}
