//go:build unix

package cmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCachePermissionDenied: a cache the user may not read, or may not
// reach, is said to be one, naming the directory and the user, by the
// cache commands and by plan; never "no package cache ... cache add
// creates one". As root, objgc runs as nobody (uid 65534) on a cache of
// root's with mode 0750; otherwise as the user on a cache of its own with
// mode 0.
func TestCachePermissionDenied(t *testing.T) {
	base, err := os.MkdirTemp("", "objgc-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
			os.Chmod(p, 0o755)
			return nil
		})
		os.RemoveAll(base)
	})
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	asRoot := os.Geteuid() == 0
	cacheMode, privateMode := os.FileMode(0o750), os.FileMode(0o700)
	if !asRoot {
		cacheMode, privateMode = 0, 0
	}
	engineCache := func(dir string) {
		id := "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
		pkg := filepath.Join(dir, "com.example.things", "1.0.0", id)
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "manifest.yaml"), []byte("Format: 1.4\nType: Application\nFullName: com.example.things\nVersion: 1.0.0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, id+"_usage.lock"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cache := filepath.Join(base, "cache")
	engineCache(cache)
	private := filepath.Join(base, "private")
	hidden := filepath.Join(private, "cache")
	engineCache(hidden)
	if err := os.Chmod(cache, cacheMode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(private, privateMode); err != nil {
		t.Fatal(err)
	}

	var bin string
	if asRoot {
		bin = filepath.Join(base, "cmd.test")
		data, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (int, string) {
		t.Helper()
		if !asRoot {
			code, _, stderr := runCmd(t, "", args...)
			return code, stderr
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"OBJGC_TEST_CMD_RUN=1", "HOME=" + base, "PATH=/usr/bin:/bin", "OBJGC_SYSTEM_CONFIG=" + filepath.Join(base, "none.yaml")}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), stderr.String()
	}
	for _, tc := range []struct {
		dir, why string
		args     []string
	}{
		{cache, "may not read it (owner ", []string{"cache", "list"}},
		{cache, "may not read it (owner ", []string{"cache", "prune", "--outdated"}},
		{cache, "may not read it (owner ", []string{"cache", "verify"}},
		{cache, "may not read it (owner ", []string{"cache", "rm", "com.example.things"}},
		{cache, "may not read it (owner ", []string{"cache", "migrate"}},
		{cache, "may not read it (owner ", []string{"plan", "../testdata/pairs/app-removed.json"}},
		{hidden, "may not reach it (a directory above it", []string{"cache", "list"}},
	} {
		args := append(tc.args, "--cache-dir", tc.dir)
		if tc.args[0] == "plan" {
			args = append([]string{"plan", "--cache-dir", tc.dir}, absPath(tc.args[1]))
		}
		code, stderr := run(args...)
		want := "objgc: package cache " + tc.dir + ": permission denied: user "
		if code != 1 || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, tc.why) || strings.Contains(stderr, "no package cache") {
			t.Errorf("objgc %s: exit %d\n%s\nwant exit 1 and %q ... %q", strings.Join(args, " "), code, stderr, want, tc.why)
		}
	}
}

// TestNoCacheHint: "no package cache" names murano-engine's cache when
// murano.conf is on the host and names another directory.
func TestNoCacheHint(t *testing.T) {
	dir := t.TempDir()
	engine := filepath.Join(dir, "engine")
	conf := filepath.Join(dir, "murano.conf")
	if err := os.WriteFile(conf, []byte("[engine]\npackages_cache = "+engine+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "murano-engine's cache on this host is " + engine + " ([engine] packages_cache in " + conf + "): give --murano-config " + conf
	if got := noCacheHint(filepath.Join(dir, "other"), conf, os.Getenv); got != want {
		t.Errorf("another directory: %q, want %q", got, want)
	}
	if got := noCacheHint(engine, conf, os.Getenv); got != "" {
		t.Errorf("the engine's own directory: %q, want no hint", got)
	}
	if got := noCacheHint(engine, filepath.Join(dir, "none.conf"), os.Getenv); got != "" {
		t.Errorf("no murano.conf: %q, want no hint", got)
	}
}
