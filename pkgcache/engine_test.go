package pkgcache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/objgc/objgc/internal/lockfile"
)

// engineUnpack lays out package src as murano-engine's ApiPackageLoader
// leaves it: <root>/<FullName>/<version>/<id>/ with the archive's files,
// and <root>/<id>_usage.lock (it takes the usage lock before anything
// else) and <root>/<id>_download.lock. No record of objgc's.
func engineUnpack(t *testing.T, c *Cache, src, id string) Entry {
	t.Helper()
	m, err := readManifest(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := c.entryDir(m.FullName, m.Version, id)
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{c.usageLockPath(id), c.downloadLockPath(id)} {
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return Entry{FullName: m.FullName, Version: m.Version, ID: id, Dir: dir}
}

// A package the engine unpacked is listed as the engine's, verified by
// parsing (no digests), read by a session (its hooks never run) and
// pruned like any other.
func TestEnginePackage(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	probe, _ := openAt(root)
	e := engineUnpack(t, probe, testPkg("com.example.databases.MySql"), "0a1b2c3d4e5f60718293a4b5c6d7e8f9")
	if !IsCache(root) {
		t.Fatal("an engine's cache directory is not taken for a cache")
	}
	c, err := OpenExisting(root)
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.List(ctx)
	if err != nil || len(list) != 1 || list[0].InstalledBy != installedByEngine || list[0].ID != e.ID || list[0].Size == 0 || list[0].Installed.IsZero() {
		t.Fatalf("List = %+v, %v", list, err)
	}
	v, err := c.Verify(ctx)
	if err != nil || v.Checked != 1 || v.Engine != 1 || len(v.Problems) != 0 {
		t.Errorf("Verify = %+v, %v", v, err)
	}
	s := c.NewSession()
	p, err := s.Package(ctx, e.FullName, "")
	if err != nil || p.ID != e.ID || p.InstalledBy != installedByEngine || p.RunsHooks {
		t.Errorf("Package = %+v, %v; want the engine's, its hooks not run", p, err)
	}
	if _, ok := s.RecordedSHA256(filepath.Join(e.Dir, "manifest.yaml")); ok {
		t.Error("a package the engine unpacked has recorded digests")
	}
	s.Close()
	// A class file damaged: verify says it does not load.
	os.WriteFile(filepath.Join(e.Dir, "Classes", "MySql.yaml"), []byte("Name: [\n"), 0o644)
	if v, _ := c.Verify(ctx); len(v.Problems) != 1 || !strings.Contains(v.Problems[0].Problem, "installed by the engine (no digests recorded), and it does not load") {
		t.Errorf("Verify of a damaged engine package = %+v", v)
	}
	res, err := c.Prune(ctx, PruneOptions{LimitSize: true, MaxSize: 0})
	if err != nil || len(res.Removed) != 1 || isDir(e.Dir) {
		t.Fatalf("Prune = %+v, %v", res, err)
	}
	assertLockFilesKept(t, c, e.ID)
}

// assertLockFilesKept fails the test unless both lock files of id are
// there, empty regular files: objgc never deletes the engine's lock files
// (a deployment starting may hold or be opening them).
func assertLockFilesKept(t *testing.T, c *Cache, id string) {
	t.Helper()
	for _, p := range []string{c.usageLockPath(id), c.downloadLockPath(id)} {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
			t.Errorf("lock file %s after the removal: %v, %v; want it kept, empty", p, fi, err)
		}
	}
}

// After an add, the other ids of the same FullName and version go, the
// engine's included, each only if its usage lock is free (as the engine's
// cleanup does after a download); the one in use stays.
func TestAddRemovesEngineIDs(t *testing.T) {
	ctx := context.Background()
	c := openCache(t)
	free := engineUnpack(t, c, testPkg("com.example.databases.MySql"), "11111111111111111111111111111111")
	busy := engineUnpack(t, c, testPkg("com.example.databases.MySql"), "22222222222222222222222222222222")
	// The engine's deployment holds busy's usage lock (a record lock of
	// another open file).
	unlock, err := c.lockAt(ctx, c.usageLockPath(busy.ID), lockfile.Shared)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	res := addZip(t, c, zipPackage(t, testPkg("com.example.databases.MySql"), nil))
	if !reflect.DeepEqual(res.RemovedIDs, []string{free.ID}) || !reflect.DeepEqual(res.KeptIDs, []string{busy.ID}) {
		t.Errorf("removed %v kept %v", res.RemovedIDs, res.KeptIDs)
	}
	if isDir(free.Dir) || !isDir(busy.Dir) {
		t.Error("wrong package removed")
	}
	assertLockFilesKept(t, c, free.ID)
}

// A process waiting for a usage lock whose file is deleted under it (the
// engine deletes lock files after its cleanup, and so does a removal)
// ends up holding a lock on the file now at the path, not on the deleted
// one that nobody else will open.
func TestLockRecheckedAfterDeletion(t *testing.T) {
	c := openCache(t)
	id := strings.Repeat("c", 64)
	unlock, err := c.tryLockAt(c.usageLockPath(id), lockfile.Exclusive)
	if err != nil || unlock == nil {
		t.Fatal(err)
	}
	got := make(chan func(), 1)
	go func() {
		u, err := c.acquireUsage(context.Background(), id)
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	time.Sleep(5 * lockfile.PollInterval) // the waiter has opened the old file
	if err := os.Remove(c.usageLockPath(id)); err != nil {
		t.Fatal(err)
	}
	unlock()
	u := <-got
	defer u()
	// A removal now opens the path: it must see the waiter's lock.
	if again, err := c.tryLockAt(c.usageLockPath(id), lockfile.Exclusive); err != nil || again != nil {
		if again != nil {
			again()
		}
		t.Fatalf("the lock at the path is free (%v): the waiter holds a lock on the deleted file", err)
	}
}

// YAML from a package is data: an alias bomb is refused quickly, not
// expanded.
func TestYAMLAliasBomb(t *testing.T) {
	bomb := "FullName: x\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		bomb += n + ": &" + n + " [" + strings.Repeat("*"+prev+",", 8) + "*" + prev + "]\n"
		prev = n
	}
	start := time.Now()
	_, err := parseManifest([]byte(bomb))
	if err == nil || !strings.Contains(err.Error(), "expands to more than") {
		t.Errorf("parseManifest of an alias bomb: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if _, err := parseManifest([]byte("FullName: x\nbase: &b {k: v}\nuse: *b\n")); err != nil {
		t.Errorf("a plain alias: %v", err)
	}
}

// --unused-for: a package only the engine uses is as old as the access
// time of its manifest.yaml (the engine reads it on every load), and
// objgc's own reads do not move it.
func TestUnusedForEnginePackage(t *testing.T) {
	ctx := context.Background()
	c := openCache(t)
	old := engineUnpack(t, c, testPkg("com.example.databases.MySql"), "33333333333333333333333333333333")
	used := engineUnpack(t, c, testPkg("com.example.WordPress"), "44444444444444444444444444444444")
	long := time.Now().Add(-90 * 24 * time.Hour)
	for _, e := range []Entry{old, used} {
		filepath.Walk(e.Dir, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, long, long) })
	}
	// The engine loaded used an hour ago.
	recent := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(used.Dir, "manifest.yaml"), recent, long)
	// objgc reads both (a plan): no access time moves.
	s := c.NewSession()
	for _, e := range []Entry{old, used} {
		if _, err := s.Package(ctx, e.FullName, ""); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	os.Remove(c.lastUsePath(old.ID)) // the session's own marker: objgc's use
	os.Remove(c.lastUsePath(used.ID))
	res, err := c.Prune(ctx, PruneOptions{UnusedFor: 30 * 24 * time.Hour})
	if err != nil || len(res.Removed) != 1 || res.Removed[0].ID != old.ID {
		t.Fatalf("Prune = %+v, %v; want %s removed only", res, err, old.ID)
	}
}

// An engine's cache whose lock files the engine's cleanup deleted (it
// deletes both lock files of every id it removes, and a deployment that
// unpacked an id again holding an orphaned lock creates none) is still a
// cache, recognised by its packages; a directory whose subdirectories
// only look like <FullName>/<version>/<id>/ without a manifest is not.
func TestEngineCacheWithoutLockFiles(t *testing.T) {
	root := t.TempDir()
	probe, _ := openAt(root)
	e := engineUnpack(t, probe, testPkg("com.example.databases.MySql"), "0a1b2c3d4e5f60718293a4b5c6d7e8f9")
	os.Remove(probe.usageLockPath(e.ID))
	os.Remove(probe.downloadLockPath(e.ID))
	if !IsCache(root) {
		t.Fatal("an engine's cache without lock files is not taken for a cache")
	}
	c, err := OpenExisting(root)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := c.List(context.Background()); err != nil || len(list) != 1 || list[0].ID != e.ID {
		t.Fatalf("List = %+v, %v", list, err)
	}

	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(other, "src", "v1", "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "src", "v1", "build", "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if IsCache(other) {
		t.Error("a directory without any package is taken for a cache")
	}
	if _, err := OpenExisting(other); !errors.Is(err, ErrNoCache) {
		t.Errorf("OpenExisting of a directory without packages: %v", err)
	}
}
