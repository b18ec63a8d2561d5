//go:build unix

package hook

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckWritersStopsAtTheHooksDir: the folders above the hooks dir are
// the system's and are not checked; the hooks dir and everything below
// it are; a sticky folder may be writable by others.
func TestCheckWritersStopsAtTheHooksDir(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "shared")
	dir := filepath.Join(parent, "hooks")
	path := writeHook(t, dir, "t.App/destroy", "exit 0\n")
	for _, p := range []string{parent, dir, filepath.Dir(path)} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := Found{Path: path, Class: "t.App", Event: EventDestroy, Source: Source{Dir: dir}}
	chmod := func(p string, m os.FileMode) {
		t.Helper()
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	chmod(parent, 0o777)
	if err := CheckWriters(f); err != nil {
		t.Fatalf("a writable folder above the hooks dir: %v; want nil", err)
	}
	chmod(parent, 0o755)
	for _, p := range []string{dir, filepath.Dir(path), path} {
		chmod(p, 0o777)
		var we *WritersError
		if err := CheckWriters(f); !errors.As(err, &we) || we.Path != p || we.Owner {
			t.Errorf("%s writable by all: %v; want a WritersError naming it", p, err)
		}
		if p != path {
			chmod(p, 0o777|os.ModeSticky)
			if err := CheckWriters(f); err != nil {
				t.Errorf("%s sticky: %v; want nil", p, err)
			}
		}
		chmod(p, 0o755)
	}
	if os.Geteuid() != 0 {
		return
	}
	if err := os.Chown(filepath.Dir(path), 65534, -1); err != nil {
		t.Fatal(err)
	}
	var we *WritersError
	if err := CheckWriters(f); !errors.As(err, &we) || !we.Owner || we.UID != 65534 {
		t.Errorf("a folder of uid 65534: %v; want a WritersError of its owner", err)
	}
}

// TestCheckWritersRunAs: a package's hook that runs as another user
// (Source.User) may belong to that user, whose rights are all it gets;
// the same files are refused for a hook that runs as objgc's user, and
// a third user's file is refused either way. Changing owners needs root.
func TestCheckWritersRunAs(t *testing.T) {
	if os.Geteuid() != 0 {
		msg := "needs root to give files to other uids: the run-as exemption of CheckWriters was not tested"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	const owner, other = 3999931, 3999932
	pkg := filepath.Join(t.TempDir(), "pkg")
	path := writeHook(t, filepath.Join(pkg, "hooks"), "t.App/destroy", "exit 0\n")
	for _, p := range []string{pkg, filepath.Join(pkg, "hooks"), filepath.Dir(path), path} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(p, owner, owner); err != nil {
			t.Fatal(err)
		}
	}
	src := Source{Dir: filepath.Join(pkg, "hooks"), PackageDir: pkg}
	f := Found{Path: path, Class: "t.App", Event: EventDestroy, Source: src}
	if n := len(WritersProblems(f)); n != 4 {
		t.Errorf("the owner's package, hook run as root: %d problems, want 4", n)
	}
	f.Source.User = &User{Name: "owner", UID: owner, GID: owner}
	if err := CheckWriters(f); err != nil {
		t.Errorf("the owner's package, hook run as the owner: %v; want nil", err)
	}
	if err := os.Lchown(path, other, other); err != nil {
		t.Fatal(err)
	}
	var we *WritersError
	if err := CheckWriters(f); !errors.As(err, &we) || we.Path != path || we.UID != other {
		t.Errorf("a third user's hook file: %v; want a WritersError naming it", err)
	}
}
