package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofrs/flock"
)

// TestOldLayoutCache: a cache written by an objgc before the engine's
// layout (here the core library moved by hand to
// packages/io.murano/0.0.0@<id>/ with its digests inside and locks/ beside,
// as it was) is refused by plan, apply and the cache commands with a
// message that says how to migrate, and nothing is destroyed; cache
// migrate moves it, and plan then reads the package's hierarchy and hooks
// from its new place.
func TestOldLayoutCache(t *testing.T) {
	added := cacheCoreLibrary(t)
	t.Setenv("NO_COLOR", "1")
	root := os.Getenv("OBJGC_CACHE_DIR")
	e := added.Entry
	oldDir := filepath.Join(root, "packages", e.FullName, e.Version+"@"+e.ID)
	for _, d := range []string{filepath.Dir(oldDir), filepath.Join(root, "locks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(e.Dir, oldDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, ".objgc", "records", e.ID+".json"), filepath.Join(oldDir, ".objgc-digests.json")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"prune.lock", e.ID + ".usage", e.ID + ".download"} {
		if err := os.WriteFile(filepath.Join(root, "locks", f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{e.FullName, ".objgc", e.ID + "_usage.lock", e.ID + "_download.lock"} {
		os.RemoveAll(filepath.Join(root, f))
	}
	wantErr := "package cache " + root + " is in an earlier objgc layout (packages/ and locks/); run objgc cache migrate --cache-dir " + root + " once to move its packages to <FullName>/<version>/<id>/, the layout murano-engine uses\n"

	model := filepath.Join(t.TempDir(), "model.json")
	data, err := os.ReadFile("../testdata/pairs/app-removed.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"plan", model},
		{"apply", model},
		{"cache", "list"},
		{"cache", "verify"},
		{"cache", "prune", "--outdated"},
		{"cache", "path", e.FullName},
		{"cache", "add", filepath.Join("..", "pkgcache", "testdata", "packages", "com.example.databases.MySql")},
	} {
		code, stdout, stderr := runCmd(t, "", args...)
		if code != ExitError || stdout != "" || !strings.HasPrefix(stderr, "objgc: ") || !strings.HasSuffix(stderr, wantErr) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and\nobjgc: %s", strings.Join(args, " "), code, stdout, stderr, wantErr)
		}
	}
	if now, _ := os.ReadFile(model); string(now) != string(data) {
		t.Errorf("apply changed the model of a cache it refused")
	}

	// An older objgc's apply holds the package's usage lock (flock): it
	// stays, exit 3: in use, as for every cache command.
	lock := flock.New(filepath.Join(root, "locks", e.ID+".usage"))
	if err := lock.RLock(); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, "", "cache", "migrate")
	lock.Unlock()
	if want := "skipped io.murano 0.0.0 " + e.ID[:12] + ": in use\nmoved 0 packages to the engine's layout\n"; code != ExitIncomplete || stdout != want || stderr != "objgc: cache migrate: 1 package in use, not moved; migrate again when they are free\n" {
		t.Errorf("migrate of a package in use: exit %d, stdout %q, stderr %q; want exit 3 and\n%s", code, stdout, stderr, want)
	}
	if _, err := os.Stat(oldDir); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr = runCmd(t, "", "cache", "migrate")
	if want := "moved io.murano 0.0.0 " + e.ID[:12] + "\nmoved 1 package to the engine's layout\n"; code != ExitOK || stdout != want || stderr != "" {
		t.Fatalf("migrate: exit %d, stdout %q, stderr %q; want\n%s", code, stdout, stderr, want)
	}
	for _, d := range []string{"packages", "locks"} {
		if _, err := os.Stat(filepath.Join(root, d)); !os.IsNotExist(err) {
			t.Errorf("%s/ is still there: %v", d, err)
		}
	}
	code, stdout, stderr = runCmd(t, "", "plan", model)
	wantHook := "hook destroy: " + filepath.Join(e.Dir, "hooks", "io.murano.resources.Instance", "destroy")
	if code != ExitOK || stderr != "" || !strings.Contains(stdout, wantHook) {
		t.Errorf("plan after migrate: exit %d, stderr %q; want the hook %s in\n%s", code, stderr, wantHook, stdout)
	}
	code, stdout, _ = runCmd(t, "", "cache", "migrate", "--format", "json")
	if want := `{"moved":[],"duplicates":[],"in_use":[],"left":[],"trash_leftovers":0,"done":true}`; code != ExitOK || strings.Join(strings.Fields(stdout), "") != want {
		t.Errorf("second migrate: exit %d, %s; want %s", code, stdout, want)
	}
}
