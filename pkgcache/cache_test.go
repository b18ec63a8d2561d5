package pkgcache

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/objgc/objgc/internal/lockfile"
)

func TestParseManifest(t *testing.T) {
	tests := []struct {
		name, yaml      string
		fullName, vers  string
		wantErrContains string
	}{
		{"no version", "FullName: io.murano\nClasses:\n  io.murano.Object: Object.yaml\n", "io.murano", "0.0.0", ""},
		{"version", "FullName: a.B\nVersion: 1.0.0\n", "a.B", "1.0.0", ""},
		{"numeric version", "FullName: a.B\nVersion: 2.1\nFormat: 1.4\n", "a.B", "2.1", ""},
		{"require nulls", "FullName: a\nRequire:\n  b: null\n  c: '>=1.0'\n", "a", "0.0.0", ""},
		{"no FullName", "Name: x\n", "", "", "no FullName"},
		{"FullName with slash", "FullName: a/b\n", "", "", "not a safe path component"},
		{"FullName dotdot", "FullName: a..b\n", "", "", "not a safe path component"},
		{"FullName leading dot", "FullName: .a\n", "", "", "not a safe path component"},
		{"version with slash", "FullName: a\nVersion: ../1\n", "", "", "not a safe path component"},
		{"class outside", "FullName: a\nClasses:\n  a.X: ../x.yaml\n", "", "", "outside Classes/"},
		{"class absolute", "FullName: a\nClasses:\n  a.X: /etc/x.yaml\n", "", "", "outside Classes/"},
		{"not yaml", "FullName: [\n", "", "", "not valid YAML"},
		{"not a map", "- a\n- b\n", "", "", "not valid YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := parseManifest([]byte(tt.yaml))
			if tt.wantErrContains != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrContains) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErrContains)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.FullName != tt.fullName || m.Version != tt.vers {
				t.Errorf("got %s %s, want %s %s", m.FullName, m.Version, tt.fullName, tt.vers)
			}
		})
	}
}

func TestResolveName(t *testing.T) {
	ns := map[string]string{"=": "io.murano.resources", "std": "io.murano", "sys": "io.murano.system"}
	tests := []struct {
		name string
		ns   map[string]string
		want string
		err  bool
	}{
		{"LinuxInstance", ns, "io.murano.resources.LinuxInstance", false},
		{"std:Application", ns, "io.murano.Application", false},
		{"sys:Agent", ns, "io.murano.system.Agent", false},
		{"io.murano.Object", ns, "io.murano.Object", false},
		{":Global", ns, "Global", false},
		{"res:Network", ns, "", true},
		{"a:b:c", ns, "", true},
		{"TestFixture", nil, "TestFixture", false},
		{"", ns, "", true},
	}
	for _, tt := range tests {
		got, err := resolveName(tt.name, tt.ns)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("resolveName(%q) = %q, %v; want %q, error %v", tt.name, got, err, tt.want, tt.err)
		}
	}
}

func TestLoadPackageMultiDocument(t *testing.T) {
	p, err := loadPackage(testPkg("io.murano"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.classes["io.murano.test.TestFixtureWithEnvironment"]; got == nil || !reflect.DeepEqual(got.Extends, []string{"TestFixture"}) {
		t.Errorf("TestFixtureWithEnvironment = %+v", got)
	}
	// The third document says res:Network with no Namespaces: that class
	// alone is unusable, as in Murano.
	if got := p.classes["io.murano.test.DummyNetwork"]; got == nil || got.Err == nil {
		t.Errorf("DummyNetwork = %+v, want an unresolved-prefix error", got)
	}
	if got := p.classes["io.murano.Object"]; len(got.Extends) != 0 {
		t.Errorf("io.murano.Object extends %v", got.Extends)
	}
	tomcat, err := loadPackage(testPkg("com.example.apache.Tomcat"))
	if err != nil {
		t.Fatal(err)
	}
	if got := tomcat.classes["com.example.apache.Tomcat"].Extends; !reflect.DeepEqual(got, []string{"io.murano.Application"}) {
		t.Errorf("Tomcat extends %v", got)
	}
	if got := tomcat.classes["io.murano.test.TomcatTest"].Extends; !reflect.DeepEqual(got, []string{"io.murano.test.TestFixture"}) {
		t.Errorf("TomcatTest extends %v", got)
	}
}

// addZip writes data into a temp file and adds it.
func addZip(t testing.TB, c *Cache, data []byte) AddResult {
	t.Helper()
	p := writeFile(t, t.TempDir(), "pkg.zip", data)
	res, err := c.Add(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestHierarchyLinuxMuranoInstance(t *testing.T) {
	c := openCache(t)
	addZip(t, c, zipPackage(t, testPkg("io.murano"), nil))
	addZip(t, c, zipPackage(t, testPkg("com.example.apache.Tomcat"), nil))
	s := c.NewSession()
	defer s.Close()
	ctx := context.Background()

	tests := []struct {
		class, version, pkg string
		want                []string
		owners              []string
	}{
		{
			"io.murano.resources.LinuxMuranoInstance", "0.0.0", "io.murano",
			[]string{
				"io.murano.resources.LinuxMuranoInstance",
				"io.murano.resources.LinuxInstance",
				"io.murano.resources.Instance",
				"io.murano.CloudResource",
				"io.murano.resources.MetadataAware",
				"io.murano.Object",
			},
			[]string{"io.murano", "io.murano", "io.murano", "io.murano", "io.murano", "io.murano"},
		},
		{ // across packages: std:Application lives in io.murano
			"com.example.apache.Tomcat", "", "",
			[]string{"com.example.apache.Tomcat", "io.murano.Application", "io.murano.Object"},
			[]string{"com.example.apache.Tomcat", "io.murano", "io.murano"},
		},
		{"io.murano.Object", "", "io.murano", []string{"io.murano.Object"}, []string{"io.murano"}},
	}
	for _, tt := range tests {
		p, err := s.FindClass(ctx, tt.class, tt.version, tt.pkg)
		if err != nil {
			t.Fatal(err)
		}
		refs, err := s.Hierarchy(ctx, tt.class, p)
		if err != nil {
			t.Fatal(err)
		}
		var names, owners []string
		for _, r := range refs {
			names = append(names, r.Name)
			owners = append(owners, r.Package.FullName)
		}
		if !reflect.DeepEqual(names, tt.want) || !reflect.DeepEqual(owners, tt.owners) {
			t.Errorf("hierarchy of %s =\n %v\n %v\nwant\n %v\n %v", tt.class, names, owners, tt.want, tt.owners)
		}
	}
	if _, err := s.FindClass(ctx, "com.example.Nope", "", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown class: err = %v, want ErrNotFound", err)
	}
	if _, err := s.FindClass(ctx, "io.murano.Object", "9.9.9", "io.murano"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown version: err = %v, want ErrNotFound", err)
	}
	// While the session holds io.murano, it is in use.
	list, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		if !e.InUse {
			t.Errorf("%s not in use while a session holds it", e.FullName)
		}
	}
	s.Close()
	list, _ = c.List(ctx)
	for _, e := range list {
		if e.InUse {
			t.Errorf("%s still in use after Close", e.FullName)
		}
	}
}

func TestAddSources(t *testing.T) {
	ctx := context.Background()
	c := openCache(t)
	data := zipPackage(t, testPkg("com.example.databases.MySql"), nil)
	zipPath := writeFile(t, t.TempDir(), "mysql.zip", data)

	res, err := c.Add(ctx, zipPath)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Installed || res.Entry.FullName != "com.example.databases.MySql" || res.Entry.Version != "0.0.0" {
		t.Fatalf("zip add = %+v", res)
	}
	again, err := c.Add(ctx, zipPath)
	if err != nil || again.Installed || again.Entry.ID != res.Entry.ID {
		t.Fatalf("second add = %+v, %v; want the same id, not installed again", again, err)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(data)
	}))
	defer srv.Close()
	viaURL, err := c.Add(ctx, srv.URL+"/mysql.zip")
	if err != nil || viaURL.Entry.ID != res.Entry.ID {
		t.Fatalf("URL add = %+v, %v; want id %s", viaURL, err, res.Entry.ID)
	}

	d1, err := c.Add(ctx, testPkg("com.example.apache.ApacheHttpServer-1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	d2, err := c.Add(ctx, testPkg("com.example.apache.ApacheHttpServer-1.0.0"))
	if err != nil || d2.Entry.ID != d1.Entry.ID || d2.Installed {
		t.Fatalf("directory add is not deterministic: %s then %+v, %v", d1.Entry.ID, d2, err)
	}
	if d1.Entry.Version != "1.0.0" {
		t.Errorf("version = %s", d1.Entry.Version)
	}
	want := filepath.Join(c.Root(), "com.example.apache.ApacheHttpServer", "1.0.0", d1.Entry.ID)
	if p, err := c.Path("com.example.apache.ApacheHttpServer", ""); err != nil || p != want {
		t.Errorf("Path = %s, %v; want %s", p, err, want)
	}
	if _, err := c.Path("com.example.apache.ApacheHttpServer", "2.0.0"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Path of a missing version: %v", err)
	}
	if n := dirNames(t, c.tmpDir()); len(n) != 0 {
		t.Errorf("tmp/ holds %v after adds", n)
	}
	if v, err := c.Verify(ctx); err != nil || len(v.Problems) != 0 || v.Checked != 2 {
		t.Errorf("Verify = %+v, %v", v, err)
	}
}

func TestOutdatedIDs(t *testing.T) {
	ctx := context.Background()
	c := openCache(t)
	dir := testPkg("com.example.databases.MySql")
	old := addZip(t, c, zipPackage(t, dir, map[string]string{"Resources/rev.txt": "1"}))

	// In use: the re-uploaded package does not remove it.
	unlock, err := c.acquireUsage(ctx, old.Entry.ID)
	if err != nil {
		t.Fatal(err)
	}
	mid := addZip(t, c, zipPackage(t, dir, map[string]string{"Resources/rev.txt": "2"}))
	if len(mid.RemovedIDs) != 0 || !reflect.DeepEqual(mid.KeptIDs, []string{old.Entry.ID}) {
		t.Errorf("add while old in use: removed %v kept %v", mid.RemovedIDs, mid.KeptIDs)
	}
	unlock()
	if p, _ := c.Path("com.example.databases.MySql", "0.0.0"); p != mid.Entry.Dir {
		t.Errorf("Path = %s, want the newest id %s", p, mid.Entry.Dir)
	}
	latest := addZip(t, c, zipPackage(t, dir, map[string]string{"Resources/rev.txt": "3"}))
	removed := latest.RemovedIDs
	want := []string{old.Entry.ID, mid.Entry.ID}
	if want[0] > want[1] {
		want[0], want[1] = want[1], want[0]
	}
	if !reflect.DeepEqual(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	list, _ := c.List(ctx)
	if len(list) != 1 || list[0].ID != latest.Entry.ID {
		t.Errorf("list = %+v", list)
	}
	if n := dirNames(t, c.tmpDir()); len(n) != 0 {
		t.Errorf("tmp/ holds %v", n)
	}
}

func TestPrunePolicies(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	setup := func(t *testing.T) (*Cache, map[string]Entry) {
		c := openCache(t)
		c.clock = func() time.Time { return now.Add(-48 * time.Hour) }
		ents := map[string]Entry{}
		for _, n := range []string{"com.example.apache.ApacheHttpServer-0.0.0", "com.example.apache.ApacheHttpServer-1.0.0", "com.example.databases.MySql", "com.example.WordPress", "io.murano"} {
			ents[n] = addZip(t, c, zipPackage(t, testPkg(n), nil)).Entry
		}
		// WordPress and io.murano were used recently, io.murano last.
		for n, age := range map[string]time.Duration{"com.example.WordPress": 2 * time.Hour, "io.murano": time.Hour} {
			os.Chtimes(c.lastUsePath(ents[n].ID), now.Add(-age), now.Add(-age))
		}
		c.clock = func() time.Time { return now }
		return c, ents
	}
	names := func(rs []Removal) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.FullName+"/"+r.Version+" "+r.Reason)
		}
		return out
	}
	tests := []struct {
		name string
		opts PruneOptions
		want []string
	}{
		{"outdated", PruneOptions{Outdated: true}, []string{"com.example.apache.ApacheHttpServer/0.0.0 older version (keeping 1)"}},
		{"outdated keep 2", PruneOptions{Outdated: true, Keep: 2}, nil},
		{"unused for a day", PruneOptions{UnusedFor: 24 * time.Hour}, []string{
			"com.example.apache.ApacheHttpServer/0.0.0 unused for 2 days",
			"com.example.apache.ApacheHttpServer/1.0.0 unused for 2 days",
			"com.example.databases.MySql/0.0.0 unused for 2 days",
		}},
		{"max size keeps the most recently used", PruneOptions{LimitSize: true, MaxSize: 1}, []string{
			"com.example.apache.ApacheHttpServer/0.0.0 cache over max size",
			"com.example.apache.ApacheHttpServer/1.0.0 cache over max size",
			"com.example.databases.MySql/0.0.0 cache over max size",
			"com.example.WordPress/0.0.0 cache over max size",
			"io.murano/0.0.0 cache over max size",
		}},
		{"max size large", PruneOptions{LimitSize: true, MaxSize: 1 << 30}, nil},
	}
	for _, tt := range tests {
		for _, dry := range []bool{true, false} {
			t.Run(tt.name+map[bool]string{true: " dry run", false: ""}[dry], func(t *testing.T) {
				c, _ := setup(t)
				before, _ := c.List(ctx)
				opts := tt.opts
				opts.DryRun = dry
				res, err := c.Prune(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				if got := names(res.Removed); !reflect.DeepEqual(got, tt.want) {
					t.Errorf("removed\n %q\nwant\n %q", got, tt.want)
				}
				var freed int64
				for _, r := range res.Removed {
					freed += r.Size
					if r.Size == 0 || r.Installed.IsZero() {
						t.Errorf("removed %s %s reported without its record: %+v", r.FullName, r.Version, r.Entry)
					}
				}
				if res.Freed != freed {
					t.Errorf("freed %d, sum of sizes %d", res.Freed, freed)
				}
				after, _ := c.List(ctx)
				wantLeft := len(before) - len(tt.want)
				if dry {
					wantLeft = len(before)
				}
				if len(after) != wantLeft {
					t.Errorf("%d packages left, want %d", len(after), wantLeft)
				}
			})
		}
	}

	t.Run("no policy", func(t *testing.T) {
		c, _ := setup(t)
		if _, err := c.Prune(ctx, PruneOptions{DryRun: true}); !errors.Is(err, ErrNoPolicy) {
			t.Errorf("err = %v, want ErrNoPolicy", err)
		}
	})
	t.Run("in use is skipped", func(t *testing.T) {
		c, ents := setup(t)
		unlock, err := c.acquireUsage(ctx, ents["com.example.apache.ApacheHttpServer-0.0.0"].ID)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		res, err := c.Prune(ctx, PruneOptions{Outdated: true, LimitSize: true, MaxSize: 0})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.InUse) != 1 || res.InUse[0].FullName != "com.example.apache.ApacheHttpServer" || res.InUse[0].Version != "0.0.0" {
			t.Errorf("in use = %+v", res.InUse)
		}
		if len(res.Removed) != 4 {
			t.Errorf("removed %v", names(res.Removed))
		}
		if !isDir(ents["com.example.apache.ApacheHttpServer-0.0.0"].Dir) {
			t.Error("the package in use was removed")
		}
	})
	// --max-size 0 alone, with a package in use: the policy selects it,
	// cannot remove it, and says so, in a dry run too.
	for _, dry := range []bool{true, false} {
		t.Run(fmt.Sprintf("max size with one in use, dry run %v", dry), func(t *testing.T) {
			c, ents := setup(t)
			unlock, err := c.acquireUsage(ctx, ents["io.murano"].ID)
			if err != nil {
				t.Fatal(err)
			}
			defer unlock()
			res, err := c.Prune(ctx, PruneOptions{LimitSize: true, MaxSize: 0, DryRun: dry})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(res.InUse); !reflect.DeepEqual(got, []string{"io.murano/0.0.0 cache over max size"}) {
				t.Errorf("in use = %q", got)
			}
			if res.PolicyMet || len(res.Removed) != 4 {
				t.Errorf("policy met %v, removed %q", res.PolicyMet, names(res.Removed))
			}
			if !isDir(ents["io.murano"].Dir) {
				t.Error("the package in use was removed")
			}
		})
	}
	t.Run("second prune", func(t *testing.T) {
		c, _ := setup(t)
		unlock, err := c.tryLockAt(c.pruneLockPath(), lockfile.Exclusive)
		if err != nil || unlock == nil {
			t.Fatal("cannot take prune.lock", err)
		}
		defer unlock()
		before := dirNames(t, c.Root())
		if _, err := c.Prune(ctx, PruneOptions{Outdated: true}); !errors.Is(err, ErrPruneRunning) {
			t.Errorf("err = %v, want ErrPruneRunning", err)
		}
		if after := dirNames(t, c.Root()); !reflect.DeepEqual(before, after) {
			t.Errorf("a refused prune changed the cache:\n%v\n%v", before, after)
		}
	})
}

func TestVerifyFindsDamage(t *testing.T) {
	ctx := context.Background()
	c := openCache(t)
	e := addZip(t, c, zipPackage(t, testPkg("com.example.apache.Tomcat"), nil)).Entry
	os.WriteFile(filepath.Join(e.Dir, "Classes", "Tomcat.yaml"), []byte("Name: Evil\n"), 0o644)
	os.Remove(filepath.Join(e.Dir, "Classes", "TomcatTest.yaml"))
	os.WriteFile(filepath.Join(e.Dir, "extra"), nil, 0o644)
	os.WriteFile(filepath.Join(c.Root(), "stray"), nil, 0o644)
	// A file named as an id is a stray too.
	os.WriteFile(filepath.Join(filepath.Dir(e.Dir), "0123"), nil, 0o644)
	res, err := c.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Problems {
		rel, _ := filepath.Rel(c.Root(), p.Path)
		got = append(got, filepath.ToSlash(rel)+": "+p.Problem)
	}
	pre := "com.example.apache.Tomcat/0.0.0/" + e.ID + "/"
	want := []string{
		"com.example.apache.Tomcat/0.0.0/0123: not a package directory named by its id",
		"stray: not a package's <FullName>/ directory nor an <id>_usage.lock or <id>_download.lock file",
		pre + "Classes/Tomcat.yaml: sha256 differs from the one recorded at unpack time",
		pre + "extra: file not in the package",
		pre + "Classes/TomcatTest.yaml: missing",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems\n %q\nwant\n %q", got, want)
	}
}

func TestCompareVersions(t *testing.T) {
	ordered := []string{"0.0.0", "0.9", "1.0.0-alpha", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0", "2.0.0"}
	for i := range ordered {
		for j := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := compareVersions(ordered[i], ordered[j]); got != want {
				t.Errorf("compareVersions(%s, %s) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}
