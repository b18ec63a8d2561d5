//go:build unix

package pkgcache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The cache's owner can write everything under the root, and tenants
// upload the packages the engine unpacks there. These tests are their
// attacks: each arranges links or files under the root and checks that
// objgc (List, Prune, Remove, Verify, a Session, Add, Migrate) neither
// follows, deletes through, nor writes through them, and reports them.

const engineID = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"

// outsideDir is a directory outside the cache holding one file that must
// survive everything below.
func outsideDir(t *testing.T) (dir, precious string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "outside")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, writeFile(t, dir, "precious", []byte("root's"))
}

func assertIntact(t *testing.T, dir, precious string, want ...string) {
	t.Helper()
	if _, err := os.Stat(precious); err != nil {
		t.Errorf("%s: %v; the file outside the cache must stay", precious, err)
	}
	names := dirNames(t, dir)
	want = append([]string{"precious"}, want...)
	slices.Sort(want)
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("%s holds %v; objgc created or removed something outside the cache", dir, names)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustPrune(t *testing.T, c *Cache, opts PruneOptions) PruneResult {
	t.Helper()
	res, err := c.Prune(context.Background(), opts)
	if err != nil {
		t.Logf("Prune: %v", err)
	}
	return res
}

// .objgc/trash replaced by a link to a directory outside: the nightly
// prune with nothing to prune must not delete what the link points at.
func TestTrashLinkOutside(t *testing.T) {
	c := openCache(t)
	addZip(t, c, zipPackage(t, testPkg("com.example.databases.MySql"), nil))
	out, precious := outsideDir(t)
	os.RemoveAll(c.trashDir())
	symlink(t, out, c.trashDir())
	mustPrune(t, c, PruneOptions{Outdated: true})
	mustPrune(t, c, PruneOptions{UnusedFor: time.Nanosecond})
	assertIntact(t, out, precious)
	res, err := c.Verify(context.Background())
	if err != nil || !hasProblem(res.Problems, c.trashDir(), "symbolic link") {
		t.Errorf("Verify: %+v, %v; want the link %s reported", res, err, c.trashDir())
	}
}

func hasProblem(ps []Problem, path, text string) bool {
	for _, p := range ps {
		if p.Path == path && strings.Contains(p.Problem, text) {
			return true
		}
	}
	return false
}

// A link at each level of the layout, to a directory outside laid out
// like packages: never listed as a package, never pruned, never removed,
// reported by Verify.
func TestLayoutLinksOutside(t *testing.T) {
	for _, level := range []string{"fullname", "version", "id"} {
		t.Run(level, func(t *testing.T) {
			ctx := context.Background()
			root := filepath.Join(t.TempDir(), "cache")
			probe, _ := openAt(root)
			engineUnpack(t, probe, testPkg("com.example.databases.MySql"), engineID)
			c, err := OpenExisting(root)
			if err != nil {
				t.Fatal(err)
			}
			out, precious := outsideDir(t)
			// outside/1.0.0/<id>/ is a package, as the engine lays one out.
			fake := filepath.Join(out, "1.0.0", "ffffffffffffffffffffffffffffffff")
			if err := os.CopyFS(fake, os.DirFS(testPkg("com.example.apache.Tomcat"))); err != nil {
				t.Fatal(err)
			}
			want := slices.DeleteFunc(dirNames(t, out), func(n string) bool { return n == "precious" })
			var link, target string
			switch level {
			case "fullname":
				link, target = filepath.Join(root, "evil"), out
			case "version":
				link, target = filepath.Join(root, "evil", "1.0.0"), filepath.Join(out, "1.0.0")
			case "id":
				link, target = filepath.Join(root, "evil", "1.0.0", "ffffffffffffffffffffffffffffffff"), fake
			}
			symlink(t, target, link)
			if err := os.WriteFile(filepath.Join(root, "ffffffffffffffffffffffffffffffff"+usageSuffix), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			list, err := c.List(ctx)
			if err != nil || len(list) != 1 || list[0].ID != engineID {
				t.Errorf("List: %+v, %v; want the engine's package alone", list, err)
			}
			if _, err := c.Remove(ctx, "evil"); !errors.Is(err, ErrNotFound) {
				t.Errorf("Remove(evil): %v; want not found", err)
			}
			mustPrune(t, c, PruneOptions{UnusedFor: time.Nanosecond})
			assertIntact(t, out, precious, want...)
			if _, err := os.Lstat(link); err != nil {
				t.Errorf("the link %s: %v; it is reported, not removed", link, err)
			}
			res, err := c.Verify(ctx)
			if err != nil || !hasProblem(res.Problems, link, "symbolic link") {
				t.Errorf("Verify: %+v, %v; want the link %s reported", res, err, link)
			}
		})
	}
}

// .objgc/lastuse, .objgc/records or one marker made a link to a directory
// outside: a session (plan) and Add create nothing there.
func TestMetaLinksOutside(t *testing.T) {
	for _, name := range []string{"lastuse", "records", "marker"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := openCache(t)
			e := addZip(t, c, zipPackage(t, testPkg("com.example.databases.MySql"), nil)).Entry
			out, precious := outsideDir(t)
			switch name {
			case "lastuse":
				os.RemoveAll(c.lastUseDir())
				symlink(t, out, c.lastUseDir())
			case "records":
				os.Rename(c.recordsDir(), c.recordsDir()+".away")
				symlink(t, out, c.recordsDir())
			case "marker":
				os.Remove(c.lastUsePath(e.ID))
				symlink(t, precious, c.lastUsePath(e.ID))
			}
			old := time.Now().Add(-48 * time.Hour)
			os.Chtimes(precious, old, old)
			s := c.NewSession()
			s.Package(ctx, e.FullName, e.Version)
			s.Close()
			c.Add(ctx, testPkg("com.example.apache.Tomcat"))
			assertIntact(t, out, precious)
			if st, err := os.Stat(precious); err == nil && time.Since(st.ModTime()) < time.Hour {
				t.Errorf("%s: its time was changed through the link", precious)
			}
		})
	}
}

// A link replacing a directory between two steps: after a prune listed
// a package, its <version>/ directory becomes a link to a directory
// outside that holds a directory of the same id. The removal must not
// reach through the link and delete that directory.
func TestVersionSwappedBetweenSteps(t *testing.T) {
	ctx := context.Background()
	c := openCache(t)
	e := addZip(t, c, zipPackage(t, testPkg("com.example.databases.MySql"), nil)).Entry
	if list, err := c.List(ctx); err != nil || len(list) != 1 {
		t.Fatalf("List: %+v, %v", list, err)
	}
	out, precious := outsideDir(t)
	if err := os.MkdirAll(filepath.Join(out, e.ID), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(out, e.ID), "kept", nil)
	vdir := filepath.Dir(e.Dir)
	if err := os.Rename(vdir, vdir+".away"); err != nil {
		t.Fatal(err)
	}
	symlink(t, out, vdir)
	c.removeEntry(c.newUseGuard([]string{e.ID}), e.FullName, e.Version, e.ID)
	assertIntact(t, out, precious, e.ID, e.ID+"/kept")
}

// A named pipe as a package's manifest.yaml or class file: Verify and a
// session report it, naming the path, and never wait on it.
func TestFIFOInPackage(t *testing.T) {
	for _, file := range []string{"manifest.yaml", "Classes/MySql.yaml"} {
		t.Run(file, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			root := filepath.Join(t.TempDir(), "cache")
			probe, _ := openAt(root)
			e := engineUnpack(t, probe, testPkg("com.example.databases.MySql"), engineID)
			p := filepath.Join(e.Dir, filepath.FromSlash(file))
			if file != "manifest.yaml" {
				entries, _ := os.ReadDir(filepath.Dir(p))
				if len(entries) == 0 {
					t.Fatal("no class file")
				}
				p = filepath.Join(filepath.Dir(p), entries[0].Name())
			}
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skipf("mkfifo: %v: a FIFO in a package was not tested", err)
			}
			c, err := OpenExisting(root)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			var res VerifyResult
			var verr, serr error
			go func() {
				defer close(done)
				res, verr = c.Verify(ctx)
				s := c.NewSession()
				_, serr = s.Package(ctx, e.FullName, e.Version)
				s.Close()
			}()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				// Unblock the open so that the test ends.
				if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
				t.Fatalf("Verify or Session waited on the FIFO %s", p)
			}
			if verr != nil || !hasProblemIn(res.Problems, p) {
				t.Errorf("Verify: %+v, %v; want a problem naming %s", res, verr, p)
			}
			if file == "manifest.yaml" && (serr == nil || !strings.Contains(serr.Error(), p)) {
				t.Errorf("Session.Package: %v; want an error naming %s", serr, p)
			}
		})
	}
}

func hasProblemIn(ps []Problem, path string) bool {
	for _, p := range ps {
		if strings.Contains(p.Problem, path) || p.Path == path {
			return true
		}
	}
	return false
}

// A record under .objgc/records/ that does not describe its place (its
// id differs) makes nothing objgc's: the package stays the engine's, and
// its hooks do not run.
func TestRecordCheckedAgainstPlace(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "cache")
	probe, _ := openAt(root)
	e := engineUnpack(t, probe, testPkg("com.example.databases.MySql"), engineID)
	c, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(c.recordsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	rec := `{"full_name": "` + e.FullName + `", "version": "` + e.Version + `", "id": "` + strings.Repeat("e", 64) + `", "installed": "2020-01-01T00:00:00Z", "size": 1, "files": {}}`
	writeFile(t, c.recordsDir(), engineID+".json", []byte(rec))
	list, err := c.List(ctx)
	if err != nil || len(list) != 1 || list[0].InstalledBy != installedByEngine {
		t.Errorf("List: %+v, %v; want the package the engine's", list, err)
	}
	s := c.NewSession()
	p, err := s.Package(ctx, e.FullName, e.Version)
	if err != nil || p.RunsHooks {
		t.Errorf("Session.Package: %+v, %v; want a package whose hooks do not run", p, err)
	}
	s.Close()
	res, err := c.Verify(ctx)
	if err != nil || !hasProblem(res.Problems, c.recordPath(engineID), "not believed") {
		t.Errorf("Verify: %+v, %v; want the record %s reported", res, err, c.recordPath(engineID))
	}
	// A prune that reads the packages removes it; the package stays.
	if _, err := c.Prune(ctx, PruneOptions{LimitSize: true, MaxSize: 1 << 40}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.recordPath(engineID)); err == nil || !isDir(e.Dir) {
		t.Errorf("after prune: record %v, package there %v; want the record gone and the package kept", err, isDir(e.Dir))
	}
}

// Tenant packages named packages and locks (Murano accepts both
// FullNames) are packages, not an earlier objgc layout: no command
// refuses the cache, and Migrate takes nothing out of them, trusts no
// .objgc-digests.json inside them and writes nothing outside the root.
func TestTenantPackagesNamedPackagesAndLocks(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "cache")
	probe, _ := openAt(root)
	src := filepath.Join(t.TempDir(), "src")
	tomcat := filepath.Join(t.TempDir(), "tomcat")
	for dir, name := range map[string]string{src: "packages", tomcat: "locks"} {
		if err := os.CopyFS(dir, os.DirFS(testPkg("com.example.apache.Tomcat"))); err != nil {
			t.Fatal(err)
		}
		m, _ := os.ReadFile(filepath.Join(dir, "manifest.yaml"))
		m = []byte(strings.Replace(string(m), "FullName: com.example.apache.Tomcat", "FullName: "+name, 1))
		writeFile(t, dir, "manifest.yaml", m)
	}
	// Inside the tenant's package "packages": a directory named like an
	// id of the oldest layout, with a record that claims an id leading
	// out of the cache, and a .lastuse file in "locks".
	sha := strings.Repeat("ab", 32)
	inner := filepath.Join(src, sha)
	if err := os.CopyFS(inner, os.DirFS(testPkg("com.example.databases.MySql"))); err != nil {
		t.Fatal(err)
	}
	out, precious := outsideDir(t)
	evilID := "../../../../../../../../../../../.." + filepath.Join(out, "x")
	writeFile(t, inner, oldDigestsFile, []byte(`{"full_name": "x", "version": "1", "id": "`+evilID+`", "files": {}}`))
	pk := engineUnpack(t, probe, src, engineID)
	lk := engineUnpack(t, probe, tomcat, "1a1b2c3d4e5f60718293a4b5c6d7e8f9")
	writeFile(t, lk.Dir, sha+".lastuse", nil)
	before := dirNames(t, pk.Dir)

	c, err := OpenExisting(root)
	if err != nil {
		t.Fatalf("OpenExisting: %v; tenant packages named packages and locks are no earlier layout", err)
	}
	list, err := c.List(ctx)
	if err != nil || len(list) != 2 {
		t.Errorf("List: %+v, %v; want the two packages", list, err)
	}
	mres, err := c.Migrate(ctx)
	if err != nil || len(mres.Moved) != 0 {
		t.Errorf("Migrate: %+v, %v; want nothing moved", mres, err)
	}
	if after := dirNames(t, pk.Dir); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("the package %s changed: %v, was %v", pk.Dir, after, before)
	}
	assertIntact(t, out, precious)
	list, err = c.List(ctx)
	if err != nil || len(list) != 2 {
		t.Errorf("List after Migrate: %+v, %v; want the two packages", list, err)
	}
	for _, e := range list {
		if e.InstalledBy != installedByEngine {
			t.Errorf("%s: installed by %s; no file in a package makes it objgc's", e.Dir, e.InstalledBy)
		}
	}
}

// A FullName Murano accepts with Unicode word characters is a package:
// listed, and pruned by --max-size. What cannot be classified is counted:
// prune never reports the policy met while its bytes keep the cache over.
func TestUnicodeFullNameAndUnclassified(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "cache")
	probe, _ := openAt(root)
	src := filepath.Join(t.TempDir(), "src")
	if err := os.CopyFS(src, os.DirFS(testPkg("com.example.databases.MySql"))); err != nil {
		t.Fatal(err)
	}
	m, _ := os.ReadFile(filepath.Join(src, "manifest.yaml"))
	m = []byte(strings.Replace(string(m), "FullName: com.example.databases.MySql", "FullName: пакет.big", 1))
	writeFile(t, src, "manifest.yaml", m)
	writeFile(t, src, "big", make([]byte, 5<<20))
	e := engineUnpack(t, probe, src, engineID)
	if e.FullName != "пакет.big" {
		t.Fatalf("FullName %q", e.FullName)
	}
	c, err := OpenExisting(root)
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.List(ctx)
	if err != nil || len(list) != 1 || list[0].FullName != "пакет.big" {
		t.Fatalf("List: %+v, %v; want пакет.big", list, err)
	}
	res := mustPrune(t, c, PruneOptions{LimitSize: true, MaxSize: 1 << 20})
	if len(res.Removed) != 1 || !res.PolicyMet {
		t.Errorf("Prune --max-size 1MB: %+v; want пакет.big removed", res)
	}
	// A name no package can have (a double dot) holding 5 MB: counted.
	bad := filepath.Join(root, "bad..name", "1.0.0", engineID)
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, bad, "big", make([]byte, 5<<20))
	res = mustPrune(t, c, PruneOptions{LimitSize: true, MaxSize: 1 << 20})
	if res.PolicyMet {
		t.Errorf("Prune --max-size 1MB: %+v; the policy is not met with 5 MB it cannot remove", res)
	}
	if _, err := os.Stat(filepath.Join(bad, "big")); err != nil {
		t.Errorf("an unclassified name was removed: %v", err)
	}
}

// cache add of a link to a package directory works as with a trailing
// slash; a rejected add leaves nothing of its own: no lock file, no
// marker.
func TestAddLinkAndRejectedLeavesNothing(t *testing.T) {
	ctx := context.Background()
	c := openCache(t)
	abs, _ := filepath.Abs(testPkg("com.example.databases.MySql"))
	link := filepath.Join(t.TempDir(), "releases", "current")
	symlink(t, abs, link)
	viaLink, err := c.Add(ctx, link)
	if err != nil {
		t.Fatalf("Add(%s): %v", link, err)
	}
	viaSlash, err := c.Add(ctx, link+string(filepath.Separator))
	if err != nil || viaSlash.Entry.ID != viaLink.Entry.ID {
		t.Errorf("Add(%s/): %+v, %v; want the same package", link, viaSlash, err)
	}

	c2 := openCache(t)
	// Rejected after the locks are taken: a class file listed but missing.
	bad := zipPackage(t, testPkg("com.example.databases.MySql"), nil)
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "p"), os.DirFS(testPkg("com.example.databases.MySql"))); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "p", "Classes"))
	for _, e := range ents {
		os.WriteFile(filepath.Join(dir, "p", "Classes", e.Name()), []byte("Name: [unclosed"), 0o644)
	}
	_ = bad
	if _, err := c2.Add(ctx, filepath.Join(dir, "p")); !errors.Is(err, ErrInvalidPackage) {
		t.Fatalf("Add: %v; want it rejected", err)
	}
	names := dirNames(t, c2.Root())
	for _, n := range names {
		if strings.HasSuffix(n, ".lock") || strings.HasPrefix(n, ".objgc/lastuse/") || strings.HasPrefix(n, ".objgc/records/") {
			t.Errorf("a rejected add left %s", n)
		}
	}
}

// An earlier layout's package whose .objgc-digests.json describes another
// place (an id leading out of the cache): Migrate believes no such
// record, leaves the package where it is, reports it, and writes nothing
// outside the root.
func TestMigrateRecordOfAnotherPlace(t *testing.T) {
	ctx := context.Background()
	c := openCache(t)
	e := addZip(t, c, zipPackage(t, testPkg("com.example.databases.MySql"), nil)).Entry
	dirs := earlierLayout(t, c, []Entry{e}, false)
	out, precious := outsideDir(t)
	evil := "../../../../../../../../../../../.." + filepath.Join(out, "x")
	writeFile(t, dirs[e.ID], oldDigestsFile, []byte(`{"full_name": "`+e.FullName+`", "version": "`+e.Version+`", "id": "`+evil+`", "files": {}}`))
	c2, err := OpenForMigrate(c.Root())
	if err != nil {
		t.Fatal(err)
	}
	res, err := c2.Migrate(ctx)
	if err != nil || len(res.Moved) != 0 || len(res.Left) != 1 || res.Left[0].Path != filepath.Join(dirs[e.ID], oldDigestsFile) {
		t.Errorf("Migrate: %+v, %v; want the package left and its record reported", res, err)
	}
	if !isDir(dirs[e.ID]) {
		t.Errorf("%s was moved", dirs[e.ID])
	}
	assertIntact(t, out, precious)
}
