//go:build unix

package hook

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// found renders a Found as "class:path-relative-to-root[:pkg][:err]".
func render(root string, fs []Found) []string {
	var out []string
	for _, f := range fs {
		rel, _ := filepath.Rel(root, f.Path)
		s := f.Class + ":" + filepath.ToSlash(rel)
		if f.Source.PackageDir != "" {
			s += ":pkg"
		}
		if errors.Is(f.Err, ErrNotExecutable) {
			s += ":notexec"
		} else if f.Err != nil {
			s += ":" + f.Err.Error()
		}
		out = append(out, s)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, rel := range []string{
		"a/Derived/destroy", "b/Derived/destroy", "b/Base/destroy",
		"a/io.murano.Object/destroy", "b/Base/notify/onDestroyed", "a/Derived/notify/onDestroyed",
		"b/Base/notify/destroy",
		// The old place of a handler hook: not found.
		"a/Base/onDestroyed", "a/Other/onDestroyed",
	} {
		writeHook(t, root, rel, "exit 0\n")
	}
	// Not hooks: a directory named like the event, a hook of another event.
	if err := os.MkdirAll(filepath.Join(a, "Base", "destroy"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeHook(t, root, "a/Base/deploy", "exit 0\n")
	// Found, but cannot run.
	noexec := writeHook(t, root, "b/io.murano.Object/destroy", "exit 0\n")
	if err := os.Chmod(noexec, 0o644); err != nil {
		t.Fatal(err)
	}
	classes := []string{"Derived", "Base", "io.murano.Object"}
	long := strings.Repeat("x", 300) // longer than a file name may be

	for _, tc := range []struct {
		name    string
		dirs    []string
		classes []string
		handler string // "": destroy
		want    []string
		old     []string // OldHandlerPlaces
	}{
		{name: "classes then dirs", dirs: []string{a, b}, classes: classes,
			want: []string{"Derived:a/Derived/destroy", "Derived:b/Derived/destroy", "Base:b/Base/destroy",
				"io.murano.Object:a/io.murano.Object/destroy", "io.murano.Object:b/io.murano.Object/destroy:notexec"}},
		{name: "dir order", dirs: []string{b, a}, classes: classes[:1],
			want: []string{"Derived:b/Derived/destroy", "Derived:a/Derived/destroy"}},
		{name: "same dir twice, spelled differently", dirs: []string{a, "", a + "/../a/", a}, classes: []string{"Derived", "Derived"},
			want: []string{"Derived:a/Derived/destroy"}},
		{name: "handler", dirs: []string{a, b}, classes: classes, handler: "onDestroyed",
			want: []string{"Derived:a/Derived/notify/onDestroyed"}, old: []string{"a/Base/onDestroyed"}},
		{name: "handler of the base", dirs: []string{a, b}, classes: classes[1:], handler: "onDestroyed",
			want: []string{"Base:b/Base/notify/onDestroyed"}, old: []string{"a/Base/onDestroyed"}},
		{name: "handler only at the old place", dirs: []string{a, b}, classes: []string{"Other"}, handler: "onDestroyed",
			old: []string{"a/Other/onDestroyed"}},
		// A handler named destroy is notify/destroy, never the destroy hook.
		{name: "handler named destroy", dirs: []string{a, b}, classes: classes, handler: "destroy",
			want: []string{"Base:b/Base/notify/destroy"}},
		{name: "handler named destroy without its hook", dirs: []string{a}, classes: classes, handler: "destroy"},
		{name: "handler named notify", dirs: []string{a, b}, classes: classes, handler: "notify"},
		{name: "none", dirs: []string{a, b}, classes: []string{"Other"}},
		{name: "no dirs", classes: classes},
		{name: "no dirs, handler", classes: classes, handler: "onDestroyed"},
		// Each of these would name a/Derived/destroy if it were joined.
		{name: "unsafe handler", dirs: []string{a}, classes: []string{"Base"}, handler: "../../Derived/destroy"},
		{name: "unsafe class", dirs: []string{filepath.Join(a, "Derived", "sub"), root}, classes: []string{"..", ".", "", "a/Derived"}},
		// ENAMETOOLONG is no hook, not a hook that cannot run.
		{name: "class too long", dirs: []string{a, b}, classes: []string{long, "Base"}, want: []string{"Base:b/Base/destroy"}},
		{name: "handler too long", dirs: []string{a, b}, classes: classes, handler: long},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.handler == "" {
				got := render(root, Find(tc.dirs, tc.classes))
				if !equal(got, tc.want) {
					t.Errorf("Find = %q\nwant %q", got, tc.want)
				}
				for _, f := range Find(tc.dirs, tc.classes) {
					if f.Event != EventDestroy || f.Handler != "" {
						t.Errorf("Found %+v, want a destroy hook", f)
					}
				}
				return
			}
			first, ok := FindHandler(tc.dirs, tc.classes, tc.handler)
			switch {
			case len(tc.want) == 0 && ok:
				t.Errorf("FindHandler = %v, want none", first)
			case len(tc.want) > 0 && (!ok || render(root, []Found{first})[0] != tc.want[0]):
				t.Errorf("FindHandler = %q, %v; want %q", render(root, []Found{first}), ok, tc.want[0])
			case ok && (first.Event != EventNotify || first.Handler != tc.handler):
				t.Errorf("Found %+v, want notify %s", first, tc.handler)
			}
			var old []string
			for _, p := range OldHandlerPlaces(tc.classes, tc.handler, Sources(tc.dirs, nil)) {
				rel, _ := filepath.Rel(root, p)
				old = append(old, filepath.ToSlash(rel))
			}
			if !equal(old, tc.old) {
				t.Errorf("OldHandlerPlaces = %q, want %q", old, tc.old)
			}
		})
	}
}

func TestFindSourcesPackage(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "hooks")
	pkgDerived := filepath.Join(root, "pkg-derived")
	pkgCore := filepath.Join(root, "pkg-core")
	writeHook(t, root, "hooks/Derived/destroy", "exit 0\n")
	writeHook(t, root, "pkg-derived/hooks/Derived/destroy", "exit 0\n")
	writeHook(t, root, "pkg-derived/hooks/Base/destroy", "exit 0\n") // not Base's package
	writeHook(t, root, "pkg-core/hooks/Base/destroy", "exit 0\n")

	// A package's hooks dir also given as a hooks dir yields its hooks once,
	// as found first: from the hooks dir.
	sources := Sources([]string{dir, filepath.Join(pkgCore, "hooks")},
		map[string]string{"Derived": pkgDerived, "Base": pkgCore})
	found := FindSources([]string{"Derived", "Base"}, sources)
	want := []string{"Derived:hooks/Derived/destroy", "Derived:pkg-derived/hooks/Derived/destroy:pkg", "Base:pkg-core/hooks/Base/destroy"}
	if got := render(root, found); !equal(got, want) {
		t.Fatalf("FindSources = %q\nwant %q", got, want)
	}
	if wd := found[0].WorkDir(); wd != filepath.Join(dir, "Derived") {
		t.Errorf("hooks dir hook: WorkDir = %s", wd)
	}
	if wd := found[1].WorkDir(); wd != pkgDerived || found[1].Source.PackageDir != pkgDerived {
		t.Errorf("package hook: WorkDir = %s, Source %+v", wd, found[1].Source)
	}

	// Without hooks dirs the package alone supplies the handler, from
	// <package>/hooks/<class>/notify/<handler>.
	writeHook(t, root, "pkg-core/hooks/Base/notify/onGone", "exit 0\n")
	first, ok := FindHandlerSources([]string{"Derived", "Base"}, "onGone", Sources(nil, map[string]string{"Base": pkgCore}))
	if !ok || first.Class != "Base" || first.Source != packageSource(pkgCore) ||
		first.Path != filepath.Join(pkgCore, "hooks", "Base", "notify", "onGone") || first.WorkDir() != pkgCore {
		t.Errorf("FindHandlerSources = %+v, %v", first, ok)
	}
}

// A package's hook that resolves outside the package (a link, or a link
// in the path to it) is found, so that running it fails, with
// ErrOutsidePackage; one that resolves to a file inside runs.
func TestFindSourcesPackageLinkOutside(t *testing.T) {
	root := t.TempDir()
	pkg := filepath.Join(root, "pkg")
	writeHook(t, root, "outside/destroy", "exit 0\n")
	writeHook(t, root, "pkg/scripts/destroy", "exit 0\n")
	for _, l := range []struct{ name, target string }{
		{"pkg/hooks/Out/destroy", "../../../outside/destroy"},
		{"pkg/hooks/Dir", "../../outside"},
		{"pkg/hooks/In/destroy", "../../scripts/destroy"},
	} {
		p := filepath.Join(root, l.name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(l.target, p); err != nil {
			t.Fatal(err)
		}
	}
	sources := Sources(nil, map[string]string{"Out": pkg, "Dir": pkg, "In": pkg})
	found := FindSources([]string{"Out", "Dir", "In"}, sources)
	if len(found) != 3 {
		t.Fatalf("FindSources = %q, want 3 hooks", render(root, found))
	}
	for _, f := range found[:2] {
		if !errors.Is(f.Err, ErrOutsidePackage) {
			t.Errorf("%s: Err = %v, want ErrOutsidePackage", f.Path, f.Err)
		}
	}
	if found[2].Err != nil {
		t.Errorf("%s: Err = %v, want nil", found[2].Path, found[2].Err)
	}
	// The same links in a hooks dir (no PackageDir) are the user's own.
	plain := FindSources([]string{"Out"}, Sources([]string{filepath.Join(pkg, "hooks")}, nil))
	if len(plain) != 1 || plain[0].Err != nil {
		t.Errorf("hooks dir: %q", render(root, plain))
	}
}

// Run refuses a package's hook that resolves outside the package, even
// when the caller did not look at Found.Err: the file is never executed.
func TestRunPackageHookOutside(t *testing.T) {
	root := t.TempDir()
	marker := filepath.Join(root, "ran")
	writeHook(t, root, "outside/destroy", "touch '"+marker+"'\n")
	pkg := filepath.Join(root, "pkg")
	link := filepath.Join(pkg, "hooks", "C", "destroy")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../outside/destroy", link); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), Invocation{Hook: link, ObjectID: "x", PackageDir: pkg})
	var he *HookError
	if !errors.As(err, &he) || !errors.Is(err, ErrOutsidePackage) {
		t.Fatalf("Run = %v, want a *HookError wrapping ErrOutsidePackage", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the hook outside the package ran (stat %s: %v)", marker, err)
	}
}
