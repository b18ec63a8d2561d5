package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSystemConfig: the system configuration file is read below the
// user's own, key by key (as git reads /etc/gitconfig below
// ~/.gitconfig); a cache named above it replaces the one it names; it is
// checked as the user's file is; errors about its keys name it.
func TestSystemConfig(t *testing.T) {
	dir := t.TempDir()
	sys := filepath.Join(dir, "system.yaml")
	user := filepath.Join(dir, "user.yaml")
	write := func(path, content string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	engineCache := filepath.Join(dir, "engine-cache")
	murano := filepath.Join(dir, "murano.conf")
	write(murano, "[engine]\npackages_cache = "+engineCache+"\n", 0o644)
	userCache := filepath.Join(dir, "user-cache")
	t.Setenv("OBJGC_SYSTEM_CONFIG", sys)
	t.Setenv("OBJGC_CONFIG", "")
	pkg := "../pkgcache/testdata/packages/com.example.apache.ApacheHttpServer-1.0.0"
	for _, d := range []string{engineCache, userCache} {
		if code, _, errOut := runCmd(t, "", "cache", "add", "--cache-dir", d, pkg); code != 0 {
			t.Fatal(errOut)
		}
	}
	// cacheDirOf runs cache list and returns the cache it listed, from
	// its JSON (cache.list.format in the system file) or its text.
	cacheDirOf := func(what string) string {
		t.Helper()
		code, out, errOut := runCmd(t, "", "cache", "list")
		var list struct {
			Dir string `json:"cache_dir"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &list) != nil {
			t.Fatalf("%s: cache list: exit %d, %q, %q", what, code, out, errOut)
		}
		return list.Dir
	}

	// Only the system file: it names the engine's cache.
	write(sys, "cache:\n  murano-config: "+murano+"\n  list:\n    format: json\n", 0o644)
	if got := cacheDirOf("the system file"); got != engineCache {
		t.Fatalf("the system file: cache %s, want %s", got, engineCache)
	}

	// The user's file wins key by key; the system file's other keys stay.
	write(user, "cache:\n  dir: "+userCache+"\n", 0o600)
	t.Setenv("OBJGC_CONFIG", user)
	if got := cacheDirOf("both files"); got != userCache {
		t.Fatalf("both files: cache %s, want %s (the user's cache.dir replaces the system file's murano-config)", got, userCache)
	}

	// A variable naming the cache replaces the system file's too.
	t.Setenv("OBJGC_CONFIG", "")
	t.Setenv("OBJGC_CACHE_DIR", userCache)
	if got := cacheDirOf("OBJGC_CACHE_DIR"); got != userCache {
		t.Fatalf("OBJGC_CACHE_DIR: cache %s, want %s", got, userCache)
	}
	t.Setenv("OBJGC_CACHE_DIR", "")

	// Checked as the user's file is, and named in errors.
	write(sys, "cache:\n  murano-config: "+murano+"\n", 0o664)
	code, _, errOut := runCmd(t, "", "cache", "list")
	if want := "objgc: " + sys + ": not used: writable by its group"; code != 1 || !strings.HasPrefix(errOut, want) {
		t.Fatalf("group-writable system file: exit %d, %q; want %q", code, errOut, want)
	}
	write(sys, "cache:\n  prune:\n    kep: 3\n", 0o644)
	code, _, errOut = runCmd(t, "", "cache", "list")
	if want := "objgc: " + sys + `: key "cache.prune.kep": unknown key`; code != 1 || !strings.HasPrefix(errOut, want) {
		t.Fatalf("unknown key in the system file: exit %d, %q; want %q", code, errOut, want)
	}
	write(sys, "on-dangling: maybe\n", 0o644)
	code, _, errOut = runCmd(t, "", "plan", "../testdata/pairs/app-removed.json")
	if want := "objgc: " + sys + ": on-dangling: --on-dangling must be error or keep"; code != 1 || !strings.HasPrefix(errOut, want) {
		t.Fatalf("bad value in the system file: exit %d, %q; want %q", code, errOut, want)
	}

	// A murano.conf that is not there: no engine on this host, the
	// user's own cache.
	write(sys, "cache:\n  murano-config: "+filepath.Join(dir, "none.conf")+"\n  list:\n    format: json\n", 0o644)
	t.Setenv("OBJGC_CACHE_DIR", userCache)
	if got := cacheDirOf("no murano.conf"); got != userCache {
		t.Fatalf("no murano.conf: cache %s, want %s", got, userCache)
	}
	t.Setenv("OBJGC_CACHE_DIR", "")
	code, out, errOut := runCmd(t, "", "cache", "list")
	if code != 1 || !strings.Contains(errOut, "no package cache at "+os.Getenv("XDG_CACHE_HOME")) {
		t.Fatalf("no murano.conf: exit %d, %q, %q; want the user's default cache", code, out, errOut)
	}

	// The user's file naming the system file: read once.
	write(sys, "cache:\n  murano-config: "+murano+"\n  list:\n    format: json\n", 0o644)
	t.Setenv("OBJGC_CONFIG", sys)
	if got := cacheDirOf("--config naming the system file"); got != engineCache {
		t.Fatalf("--config naming the system file: cache %s, want %s", got, engineCache)
	}

	// No system file: nothing read, no error.
	t.Setenv("OBJGC_CONFIG", "")
	t.Setenv("OBJGC_SYSTEM_CONFIG", filepath.Join(dir, "none.yaml"))
	code, out, errOut = runCmd(t, "", "cache", "list")
	if code != 1 || strings.Contains(out+errOut, engineCache) || !strings.Contains(errOut, "no package cache") {
		t.Fatalf("no system file: exit %d, %q, %q; want the user's default cache, which is not there", code, out, errOut)
	}
}

// TestHelpGivesSettingsOrder: objgc --help names every source of a
// setting, in the order of docs/config.md's "Precedence".
func TestHelpGivesSettingsOrder(t *testing.T) {
	code, out, _ := runCmd(t, "", "--help")
	text := strings.Join(strings.Fields(out), " ")
	last := -1
	for _, s := range []string{"its flag", "OBJGC_* variable", "your configuration file (--config or OBJGC_CONFIG",
		"./objgc.yaml", "$XDG_CONFIG_HOME/objgc/config.yaml", "/etc/objgc/config.yaml (OBJGC_SYSTEM_CONFIG", "the default"} {
		i := strings.Index(text, s)
		if code != 0 || i <= last {
			t.Fatalf("objgc --help (exit %d) does not give %q after the sources before it:\n%s", code, s, out)
		}
		last = i
	}
}
