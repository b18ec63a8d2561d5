package pkgcache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/gofrs/flock"
)

// earlierLayout moves the packages es, as Add left them, to where an
// earlier objgc kept them: packages/<FullName>/<version>@<id>/ (at) or,
// older, packages/<FullName>/<version>/<id>/ (older), each with its
// digests record inside as .objgc-digests.json and its lock files and
// last-use marker in locks/; .objgc/ and the engine's lock files go. It
// adds the trash of a removal killed under that layout.
func earlierLayout(t *testing.T, c *Cache, es []Entry, older bool) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	mkdir := func(d string) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mkdir(filepath.Join(c.Root(), "locks"))
	writeFile(t, filepath.Join(c.Root(), "locks"), "prune.lock", nil)
	for _, e := range es {
		old := filepath.Join(c.Root(), "packages", e.FullName, e.Version+"@"+e.ID)
		if older {
			old = filepath.Join(c.Root(), "packages", e.FullName, e.Version, e.ID)
		}
		mkdir(filepath.Dir(old))
		if err := os.Rename(e.Dir, old); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(c.recordPath(e.ID), filepath.Join(old, oldDigestsFile)); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{".usage", ".download", ".lastuse"} {
			writeFile(t, filepath.Join(c.Root(), "locks"), e.ID+s, nil)
		}
		os.Remove(c.usageLockPath(e.ID))
		os.Remove(c.downloadLockPath(e.ID))
		dirs[e.ID] = old
	}
	for _, e := range es {
		os.RemoveAll(c.fullNameDir(e.FullName))
	}
	os.RemoveAll(c.metaDir())
	mkdir(filepath.Join(c.Root(), "packages", es[0].FullName, oldTrashPrefix+"0123456789abcdef", "Classes"))
	return dirs
}

func addThree(t *testing.T, c *Cache) []Entry {
	var es []Entry
	for _, name := range []string{"com.example.databases.MySql", "com.example.apache.ApacheHttpServer-0.0.0", "com.example.apache.ApacheHttpServer-1.0.0"} {
		es = append(es, addZip(t, c, zipPackage(t, testPkg(name), nil)).Entry)
	}
	return es
}

// Both earlier layouts are refused by every reader rather than read as a
// cache without those packages; Migrate moves every package to the
// engine's layout, with its record and last use, says what it moved, and
// leaves nothing of the earlier layout; a package in use (an earlier
// objgc's flock on locks/<id>.usage) stays until it is free.
func TestMigrate(t *testing.T) {
	for _, older := range []bool{false, true} {
		name := "version@id"
		if older {
			name = "version/id"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := openCache(t)
			es := addThree(t, c)
			old := earlierLayout(t, c, es, older)
			for what, open := range map[string]func(string) (*Cache, error){"Open": Open, "OpenExisting": OpenExisting} {
				var oe *OldLayoutError
				if _, err := open(c.Root()); !errors.Is(err, ErrOldLayout) || !errors.As(err, &oe) || oe.Root != c.Root() {
					t.Errorf("%s of an earlier layout: %v", what, err)
				}
			}
			held := flock.New(filepath.Join(c.Root(), "locks", es[2].ID+".usage"))
			if ok, err := held.TryRLock(); !ok || err != nil {
				t.Fatal(ok, err)
			}
			res, err := c.Migrate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids := func(es []Entry) []string {
				var out []string
				for _, e := range es {
					out = append(out, e.ID)
				}
				slices.Sort(out)
				return out
			}
			if got, want := ids(res.Moved), ids(es[:2]); !reflect.DeepEqual(got, want) || len(res.InUse) != 1 || res.InUse[0].Dir != old[es[2].ID] || res.Leftovers != 1 || res.Done() {
				t.Fatalf("first migration: %+v; want %v moved, %s in use, 1 leftover", res, want, es[2].ID)
			}
			if _, err := OpenExisting(c.Root()); !errors.Is(err, ErrOldLayout) {
				t.Errorf("with a package left in the earlier layout: %v", err)
			}
			held.Close()
			res, err = c.Migrate(ctx)
			if err != nil || !res.Done() || len(res.Moved) != 1 || res.Moved[0].ID != es[2].ID {
				t.Fatalf("second migration: %+v, %v", res, err)
			}
			for _, d := range []string{"packages", "locks", "tmp"} {
				if _, err := os.Lstat(filepath.Join(c.Root(), d)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s/ is left: %v", d, err)
				}
			}
			res, err = c.Migrate(ctx)
			if err != nil || !res.Done() || len(res.Moved) != 0 {
				t.Fatalf("third migration: %+v, %v; want nothing to do", res, err)
			}
			c2, err := OpenExisting(c.Root())
			if err != nil {
				t.Fatal(err)
			}
			list, err := c2.List(ctx)
			if err != nil || len(list) != 3 {
				t.Fatalf("List: %v, %v", list, err)
			}
			for _, e := range list {
				if e.InstalledBy != installedByObjgc || e.Dir != c.entryDir(e.FullName, e.Version, e.ID) || e.Installed.IsZero() || e.LastUse.IsZero() {
					t.Errorf("migrated %+v: want objgc's, in the engine's layout, with install time and last use", e)
				}
			}
			if v, err := c2.Verify(ctx); err != nil || v.Checked != 3 || len(v.Problems) != 0 || v.Engine != 0 {
				t.Errorf("Verify: %+v, %v", v, err)
			}
			if res := addZip(t, c2, zipPackage(t, testPkg("com.example.databases.MySql"), nil)); res.Installed || res.Entry.ID != es[0].ID {
				t.Errorf("Add of a migrated package: %+v; want already cached", res)
			}
		})
	}
}

// A package in both layouts: the old copy goes, the other stays.
func TestMigrateDuplicate(t *testing.T) {
	ctx := context.Background()
	c := openCache(t)
	e := addZip(t, c, zipPackage(t, testPkg("com.example.databases.MySql"), nil)).Entry
	old := filepath.Join(c.Root(), "packages", e.FullName, e.Version+"@"+e.ID)
	if err := os.CopyFS(old, os.DirFS(e.Dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(c.Root(), "locks"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := c.Migrate(ctx)
	if err != nil || len(res.Duplicates) != 1 || len(res.Moved) != 0 || !res.Done() {
		t.Fatalf("Migrate: %+v, %v; want one duplicate removed", res, err)
	}
	if isDir(old) || !isDir(e.Dir) {
		t.Errorf("old copy left or current one gone")
	}
	if v, err := c.Verify(ctx); err != nil || v.Checked != 1 || len(v.Problems) != 0 {
		t.Errorf("Verify: %+v, %v", v, err)
	}
}

// Migrate runs under the prune locks of both layouts: not beside a prune
// of this objgc nor of an earlier one, and touching nothing then.
func TestMigrateBesidePrune(t *testing.T) {
	for _, earlier := range []bool{false, true} {
		c := openCache(t)
		earlierLayout(t, c, addThree(t, c), false)
		var release func()
		if earlier {
			l := flock.New(filepath.Join(c.Root(), "locks", "prune.lock"))
			if ok, err := l.TryLock(); !ok || err != nil {
				t.Fatal(ok, err)
			}
			release = func() { l.Close() }
		} else {
			if err := os.MkdirAll(c.metaDir(), 0o755); err != nil {
				t.Fatal(err)
			}
			release = holdLock(t, helperCmd(t, "holdprune", c.Root()))
		}
		before := dirNames(t, c.Root())
		if _, err := c.Migrate(context.Background()); !errors.Is(err, ErrPruneRunning) {
			t.Errorf("Migrate during a prune (earlier objgc: %v): %v", earlier, err)
		}
		if after := dirNames(t, c.Root()); !reflect.DeepEqual(before, after) {
			t.Errorf("a refused migration changed the cache:\n%v\n%v", before, after)
		}
		release()
	}
}

// The engine's layout, as Add and Prune leave it: <FullName>/<version>/<id>/,
// the lock files at the root, objgc's record in .objgc/records/, nothing of
// objgc's in the package directory; a removal takes the package, its
// record and its lock files, and leaves the <version>/ directory.
func TestLayout(t *testing.T) {
	ctx := context.Background()
	c := openCache(t)
	a := addZip(t, c, zipPackage(t, testPkg("com.example.apache.ApacheHttpServer-0.0.0"), nil)).Entry
	b := addZip(t, c, zipPackage(t, testPkg("com.example.apache.ApacheHttpServer-1.0.0"), nil)).Entry
	for _, e := range []Entry{a, b} {
		if want := filepath.Join(c.Root(), e.FullName, e.Version, e.ID); e.Dir != want {
			t.Errorf("Dir = %s, want %s", e.Dir, want)
		}
		for _, p := range []string{c.usageLockPath(e.ID), c.recordPath(e.ID), filepath.Join(e.Dir, "manifest.yaml")} {
			if _, err := os.Stat(p); err != nil {
				t.Error(err)
			}
		}
	}
	if n := dirNames(t, a.Dir); slices.ContainsFunc(n, func(s string) bool { return s[0] == '.' }) {
		t.Errorf("package directory holds %v", n)
	}
	res, err := c.Prune(ctx, PruneOptions{Outdated: true})
	if err != nil || len(res.Removed) != 1 || res.Removed[0].ID != a.ID {
		t.Fatalf("prune: %+v, %v", res, err)
	}
	for _, p := range []string{a.Dir, c.recordPath(a.ID)} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left after the removal: %v", p, err)
		}
	}
	assertLockFilesKept(t, c, a.ID)
	if !isDir(filepath.Dir(a.Dir)) {
		t.Errorf("the emptied version directory was removed")
	}
	if n := dirNames(t, c.trashDir()); len(n) != 0 {
		t.Errorf("trash holds %v", n)
	}
}
