package pkgcache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// toOldLayout moves the package e, as Add left it, to where objgc put it
// before packages/<FullName>/<version>@<id>/: packages/<FullName>/<version>/<id>/.
// It returns the old directory.
func toOldLayout(t *testing.T, c *Cache, e Entry) string {
	t.Helper()
	old := filepath.Join(c.fullNameDir(e.FullName), e.Version, e.ID)
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(e.Dir, old); err != nil {
		t.Fatal(err)
	}
	return old
}

// oldLayoutCache is a cache as an older objgc left it: MySql and two
// versions of ApacheHttpServer in packages/<FullName>/<version>/<id>/,
// and the trash of a removal killed under that layout.
func oldLayoutCache(t *testing.T) (*Cache, []Entry) {
	t.Helper()
	c := openCache(t)
	var es []Entry
	for _, name := range []string{"com.example.databases.MySql", "com.example.apache.ApacheHttpServer-0.0.0", "com.example.apache.ApacheHttpServer-1.0.0"} {
		es = append(es, addZip(t, c, zipPackage(t, testPkg(name), nil)).Entry)
	}
	for _, e := range es {
		toOldLayout(t, c, e)
	}
	trash := filepath.Join(c.fullNameDir(es[0].FullName), es[0].Version, trashPrefix+"0123456789abcdef")
	if err := os.MkdirAll(filepath.Join(trash, "Classes"), 0o755); err != nil {
		t.Fatal(err)
	}
	return c, es
}

// A cache in the old layout is refused by every reader, and by a prune,
// rather than read as a cache without those packages; nothing changes.
func TestOldLayoutRefused(t *testing.T) {
	ctx := context.Background()
	c, es := oldLayoutCache(t)
	before := dirNames(t, c.packagesDir())
	isOld := func(what string, err error) {
		t.Helper()
		var oe *OldLayoutError
		if !errors.Is(err, ErrOldLayout) || !errors.As(err, &oe) || oe.Root != c.Root() {
			t.Errorf("%s: %v; want an *OldLayoutError of %s", what, err, c.Root())
		}
	}
	_, err := c.List(ctx)
	isOld("List", err)
	_, err = c.Verify(ctx)
	isOld("Verify", err)
	_, err = c.Prune(ctx, PruneOptions{Outdated: true})
	isOld("Prune", err)
	_, err = c.Prune(ctx, PruneOptions{UnusedFor: 1, DryRun: true})
	isOld("Prune --dry-run", err)
	_, err = c.Lookup(es[1].FullName, "")
	isOld("Lookup", err)
	_, err = c.Path(es[0].FullName, es[0].Version)
	isOld("Path", err)
	isOld("CheckLayout", c.CheckLayout())
	s := c.NewSession()
	_, err = s.Package(ctx, es[0].FullName, "")
	isOld("Session.Package", err)
	_, err = s.FindClass(ctx, "com.example.databases.MySql", "", "")
	isOld("Session.FindClass", err)
	s.Close()
	// Adding a package of a FullName in the old layout would not see the
	// id cached there.
	_, err = c.Add(ctx, writeFile(t, t.TempDir(), "mysql.zip", zipPackage(t, testPkg("com.example.databases.MySql"), nil)))
	isOld("Add", err)
	if after := dirNames(t, c.packagesDir()); !reflect.DeepEqual(before, after) {
		t.Errorf("a refusal changed the cache:\n%v\n%v", before, after)
	}
	if err := (&OldLayoutError{Root: "/c", Dir: "/c/packages/a.B/1.0.0"}).Error(); err != "package cache /c is in the old layout (/c/packages/a.B/1.0.0 holds packages/<FullName>/<version>/<id>/); run objgc cache migrate --cache-dir /c once to move its packages to packages/<FullName>/<version>@<id>/" {
		t.Errorf("message: %s", err)
	}
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	c, es := oldLayoutCache(t)
	// An older objgc's apply holds the usage lock of one of them.
	release := holdLock(t, helperCmd(t, "holdusageid", c.Root(), "PKGCACHE_SOURCES="+es[2].ID))
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
	want := ids(es[:2])
	if got := ids(res.Moved); !reflect.DeepEqual(got, want) || len(res.InUse) != 1 || res.InUse[0].ID != es[2].ID || res.Leftovers != 1 || res.Done() {
		t.Fatalf("first migration: %+v; want %v moved, %s in use, 1 leftover", res, want, es[2].ID)
	}
	if m := res.Moved[0]; m.Size == 0 || m.Installed.IsZero() || filepath.Base(m.Dir) != m.Version+"@"+m.ID {
		t.Errorf("moved entry %+v: want its record's size and install time, and its new directory", m)
	}
	// Still in the old layout: the package in use is where it was.
	if err := c.CheckLayout(); !errors.Is(err, ErrOldLayout) {
		t.Errorf("CheckLayout with a package left: %v", err)
	}
	release()

	// A stray name in an old version directory is not guessed at.
	stray := filepath.Join(c.fullNameDir(es[2].FullName), es[2].Version, "notes.txt")
	writeFile(t, filepath.Dir(stray), "notes.txt", []byte("x"))
	res, err = c.Migrate(ctx)
	if err != nil || len(res.Moved) != 1 || res.Moved[0].ID != es[2].ID || len(res.Left) != 1 || res.Left[0].Path != stray || res.Done() {
		t.Fatalf("second migration: %+v, %v; want %s moved and %s left", res, err, es[2].ID, stray)
	}
	os.Remove(stray)
	res, err = c.Migrate(ctx)
	if err != nil || !res.Done() || len(res.Moved)+len(res.Duplicates)+res.Leftovers != 0 {
		t.Fatalf("third migration: %+v, %v; want nothing to do", res, err)
	}
	if err := c.CheckLayout(); err != nil {
		t.Fatal(err)
	}
	// Everything is where the current layout puts it, and reads as before.
	var got []string
	for _, n := range dirNames(t, c.packagesDir()) {
		if filepath.Dir(n) == "." || filepath.Dir(filepath.Dir(n)) == "." {
			got = append(got, n)
		}
	}
	wantNames := []string{
		es[1].FullName, es[1].FullName + "/0.0.0@" + es[1].ID, es[1].FullName + "/1.0.0@" + es[2].ID,
		es[0].FullName, es[0].FullName + "/" + es[0].Version + "@" + es[0].ID,
	}
	if !reflect.DeepEqual(got, wantNames) {
		t.Errorf("packages/ holds\n%v\nwant\n%v", got, wantNames)
	}
	list, err := c.List(ctx)
	if err != nil || len(list) != 3 {
		t.Fatalf("List: %v, %v", list, err)
	}
	if v, err := c.Verify(ctx); err != nil || v.Checked != 3 || len(v.Problems) != 0 {
		t.Errorf("Verify: %+v, %v", v, err)
	}
	s := c.NewSession()
	defer s.Close()
	if p, err := s.Package(ctx, es[2].FullName, ""); err != nil || p.ID != es[2].ID {
		t.Errorf("Session.Package: %v, %v", p, err)
	}
	if res := addZip(t, c, zipPackage(t, testPkg("com.example.databases.MySql"), nil)); res.Installed || res.Entry.ID != es[0].ID {
		t.Errorf("Add of a migrated package: %+v; want already cached", res)
	}
}

// A package in both layouts (an objgc of the current one added it again
// after an older one had): the old copy goes, the current one stays.
func TestMigrateDuplicate(t *testing.T) {
	ctx := context.Background()
	c := openCache(t)
	e := addZip(t, c, zipPackage(t, testPkg("com.example.databases.MySql"), nil)).Entry
	old := filepath.Join(c.fullNameDir(e.FullName), e.Version, e.ID)
	if err := os.CopyFS(old, os.DirFS(e.Dir)); err != nil {
		t.Fatal(err)
	}
	res, err := c.Migrate(ctx)
	if err != nil || len(res.Duplicates) != 1 || len(res.Moved) != 0 || !res.Done() {
		t.Fatalf("Migrate: %+v, %v; want one duplicate removed", res, err)
	}
	if want := []string{e.FullName, e.FullName + "/" + e.Version + "@" + e.ID}; !reflect.DeepEqual(dirNames(t, c.packagesDir())[:2], want) || isDir(filepath.Dir(old)) {
		t.Errorf("packages/ holds %v", dirNames(t, c.packagesDir()))
	}
	if v, err := c.Verify(ctx); err != nil || v.Checked != 1 || len(v.Problems) != 0 {
		t.Errorf("Verify: %+v, %v", v, err)
	}
}

// Migrate runs under the prune lock: not beside a prune (here a process
// holding the lock), and touching nothing then.
func TestMigrateBesidePrune(t *testing.T) {
	c, _ := oldLayoutCache(t)
	release := holdLock(t, helperCmd(t, "holdprune", c.Root()))
	defer release()
	before := dirNames(t, c.Root())
	if _, err := c.Migrate(context.Background()); !errors.Is(err, ErrPruneRunning) {
		t.Errorf("Migrate during a prune: %v", err)
	}
	if after := dirNames(t, c.Root()); !reflect.DeepEqual(before, after) {
		t.Errorf("a refused migration changed the cache")
	}
}

// The current layout, as Add and Prune leave it: one directory per
// package, <version>@<id>, under its FullName; the trash of a removal
// beside it; an emptied FullName directory removed.
func TestLayout(t *testing.T) {
	ctx := context.Background()
	c := openCache(t)
	a := addZip(t, c, zipPackage(t, testPkg("com.example.apache.ApacheHttpServer-0.0.0"), nil)).Entry
	b := addZip(t, c, zipPackage(t, testPkg("com.example.apache.ApacheHttpServer-1.0.0"), nil)).Entry
	m := addZip(t, c, zipPackage(t, testPkg("com.example.databases.MySql"), nil)).Entry
	for _, e := range []Entry{a, b, m} {
		if want := filepath.Join(c.Root(), "packages", e.FullName, e.Version+"@"+e.ID); e.Dir != want {
			t.Errorf("Dir = %s, want %s", e.Dir, want)
		}
	}
	if got := trashName(a.Dir); filepath.Dir(got) != c.fullNameDir(a.FullName) {
		t.Errorf("trash %s is not in the FullName directory", got)
	}
	res, err := c.Prune(ctx, PruneOptions{Outdated: true})
	if err != nil || len(res.Removed) != 1 || res.Removed[0].ID != a.ID {
		t.Fatalf("prune: %+v, %v", res, err)
	}
	if got, want := dirNames(t, c.fullNameDir(a.FullName))[0], b.Version+"@"+b.ID; got != want {
		t.Errorf("left %s, want %s", got, want)
	}
	res, err = c.Prune(ctx, PruneOptions{UnusedFor: 1})
	if err != nil || len(res.Removed) != 2 {
		t.Fatalf("prune: %+v, %v", res, err)
	}
	if n := dirNames(t, c.packagesDir()); len(n) != 0 {
		t.Errorf("packages/ holds %v after every package was removed", n)
	}
}

// A package of the old layout whose version is too long for
// <version>@<id> in one file name is reported and left; the others are
// moved all the same (migrate does not stop at it).
func TestMigrateVersionTooLong(t *testing.T) {
	ctx := context.Background()
	c, es := oldLayoutCache(t)
	long := strings.Repeat("1", maxVersion+1)
	p := filepath.Join(c.fullNameDir("com.example.Long"), long, es[0].ID)
	if err := os.CopyFS(p, os.DirFS(filepath.Join(c.fullNameDir(es[0].FullName), es[0].Version, es[0].ID))); err != nil {
		t.Fatal(err)
	}
	res, err := c.Migrate(ctx)
	if err != nil || len(res.Moved) != 3 || len(res.Left) != 1 || res.Left[0].Path != p || !strings.Contains(res.Left[0].Problem, "version is 191 bytes") || res.Done() {
		t.Fatalf("Migrate: %+v, %v; want 3 moved and %s left", res, err, p)
	}
	if !isDir(p) {
		t.Errorf("%s was removed", p)
	}
}
