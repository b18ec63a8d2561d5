//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/objgc/objgc/internal/lockfile"
)

// engineCache lays out com.example.databases.MySql as murano-engine
// leaves it (<root>/<FullName>/<version>/<id>/ and its lock files) and
// returns the root and the package directory.
func engineCache(t *testing.T) (root, pkg string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "cache")
	const id = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
	pkg = filepath.Join(root, "com.example.databases.MySql", "0.0.0", id)
	if err := os.CopyFS(pkg, os.DirFS(filepath.Join("pkgcache", "testdata", "packages", "com.example.databases.MySql"))); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"_usage.lock", "_download.lock"} {
		if err := os.WriteFile(filepath.Join(root, id+s), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, pkg
}

// mysqlModel is a model whose one doomed object is of a class of
// com.example.databases.MySql, so that plan reads that package.
func mysqlModel(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "model.json")
	model := `{"Objects": {"?": {"id": "env", "type": "io.murano.Environment"}},
 "ObjectsCopy": {"?": {"id": "env", "type": "io.murano.Environment"},
  "db": {"?": {"id": "db1", "type": "com.example.databases.MySql/0.0.0@com.example.databases.MySql"}}},
 "Attributes": []}`
	if err := os.WriteFile(p, []byte(model), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runObjgc runs this test binary as objgc with args (its output is stdout
// and stderr together) and waits at most
// 30 s (a hang, not a measurement); signal, when not 0, is sent once the
// process has had time to start waiting.
func runObjgc(t *testing.T, sig syscall.Signal, args ...string) (code int, output string) {
	t.Helper()
	c := objgcCommand(args...)
	var out bytes.Buffer
	c.Stderr, c.Stdout = &out, &out
	return waitExit(t, c, sig, time.Second), out.String()
}

// A named pipe as a package's manifest.yaml: cache verify reports it,
// naming the path, and plan warns; neither waits on it.
func TestCacheFIFOManifest(t *testing.T) {
	root, pkg := engineCache(t)
	manifest := filepath.Join(pkg, "manifest.yaml")
	os.Remove(manifest)
	if err := syscall.Mkfifo(manifest, 0o644); err != nil {
		t.Skipf("mkfifo: %v: a FIFO in a package was not tested", err)
	}
	code, out := runObjgc(t, 0, "cache", "verify", "--cache-dir", root)
	if code != 1 || !strings.Contains(out, manifest) || !strings.Contains(out, "named pipe") {
		t.Errorf("cache verify: exit %d, want 1 and the named pipe %s reported\n%s", code, manifest, out)
	}
	code, out = runObjgc(t, 0, "plan", "--cache-dir", root, mysqlModel(t))
	if code != 0 || !strings.Contains(out, manifest) || !strings.Contains(out, "hierarchy_incomplete") {
		t.Errorf("plan: exit %d, want 0 and a warning naming %s\n%s", code, manifest, out)
	}
}

// Every cache command and plan that waits (here for a usage lock another
// process holds exclusively, as a removal does) stops on the first SIGINT
// or SIGTERM with 130.
func TestCacheWaitSignal(t *testing.T) {
	root, _ := engineCache(t)
	unlock, err := lockfile.TryLockPath(filepath.Join(root, "0a1b2c3d4e5f60718293a4b5c6d7e8f9_usage.lock"), lockfile.Exclusive)
	if err != nil || unlock == nil {
		t.Fatalf("locking: %v", err)
	}
	defer unlock()
	model := mysqlModel(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, args := range [][]string{
			{"cache", "verify", "--cache-dir", root},
			{"plan", "--cache-dir", root, model},
		} {
			t.Run(sig.String()+"/"+args[0]+" "+args[1], func(t *testing.T) {
				code, stderr := runObjgc(t, sig, args...)
				if code != 130 {
					t.Errorf("exit %d, want 130\n%s", code, stderr)
				}
			})
		}
	}
}

// A link where the layout has none is reported by cache list and cache
// prune (as a warning naming it), never followed; what cannot be
// classified keeps prune --max-size from reporting the policy met.
func TestCacheListPruneReportLinks(t *testing.T) {
	root, _ := engineCache(t)
	out := filepath.Join(t.TempDir(), "outside")
	if err := os.MkdirAll(filepath.Join(out, "1.0.0", "ffffffffffffffffffffffffffffffff"), 0o755); err != nil {
		t.Fatal(err)
	}
	evil := filepath.Join(root, "evil")
	if err := os.Symlink(out, evil); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(root, "bad..name")
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(big, "blob"), make([]byte, 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	code, list := runObjgc(t, 0, "cache", "list", "--cache-dir", root)
	if code != 0 || !strings.Contains(list, "warning: "+evil) || !strings.Contains(list, "symbolic link") || strings.Contains(list, "ffffffffffff") {
		t.Errorf("cache list: exit %d, want the link %s warned of and nothing behind it listed\n%s", code, evil, list)
	}
	code, prune := runObjgc(t, 0, "cache", "prune", "--cache-dir", root, "--max-size", "1MiB", "--quiet")
	if code != 3 || !strings.Contains(prune, "policy not met") || !strings.Contains(prune, evil) {
		t.Errorf("cache prune --max-size 1MiB: exit %d, want 3, the link warned of and the policy not met\n%s", code, prune)
	}
	if _, err := os.Stat(filepath.Join(out, "1.0.0", "ffffffffffffffffffffffffffffffff")); err != nil {
		t.Errorf("prune reached through the link: %v", err)
	}
}
