package cmd

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/objgc/objgc/internal/lockfile"
)

// runObjgc runs objgc in-process and returns the exit status and output.
func runObjgc(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), BuildInfo{}, args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// zipTestPackage zips one of ../pkgcache/testdata/packages as Murano ships
// packages (manifest.yaml at the archive root).
func zipTestPackage(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join("..", "pkgcache", "testdata", "packages", name)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		w, _ := zw.Create(filepath.ToSlash(rel))
		data, _ := os.ReadFile(p)
		w.Write(data)
		return nil
	})
	zw.Close()
	out := filepath.Join(t.TempDir(), name+".zip")
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

var hexID = regexp.MustCompile(`[0-9a-f]{64}`)

func TestCacheCommands(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	old := zipTestPackage(t, "com.example.apache.ApacheHttpServer-0.0.0")
	newer := filepath.Join("..", "pkgcache", "testdata", "packages", "com.example.apache.ApacheHttpServer-1.0.0")

	code, out, errOut := runObjgc(t, "cache", "add", "--cache-dir", cache, old, newer)
	if code != ExitOK || errOut != "" {
		t.Fatalf("add: exit %d, stderr %q", code, errOut)
	}
	ids := hexID.FindAllString(out, -1)
	wantOut := "added com.example.apache.ApacheHttpServer 0.0.0 " + ids[0] + "\n" +
		"added com.example.apache.ApacheHttpServer 1.0.0 " + ids[1] + "\n"
	if out != wantOut {
		t.Errorf("add stdout:\n%s\nwant\n%s", out, wantOut)
	}
	code, out, _ = runObjgc(t, "cache", "add", "--cache-dir", cache, old)
	if code != ExitOK || out != "already cached com.example.apache.ApacheHttpServer 0.0.0 "+ids[0]+"\n" {
		t.Errorf("second add: exit %d, %q", code, out)
	}

	code, out, _ = runObjgc(t, "cache", "list", "--cache-dir", cache)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitOK || len(lines) != 4 || !strings.HasPrefix(lines[0], "FULLNAME") ||
		!strings.HasPrefix(lines[1], "com.example.apache.ApacheHttpServer  0.0.0    "+ids[0][:12]) ||
		!strings.HasSuffix(lines[2], "no      objgc") || !strings.HasPrefix(lines[3], "total: 2 packages, ") {
		t.Errorf("list: exit %d\n%s", code, out)
	}
	code, out, _ = runObjgc(t, "cache", "list", "--cache-dir", cache, "--format", "json")
	var listed struct {
		Packages []struct {
			FullName string `json:"full_name"`
			Version  string `json:"version"`
			ID       string `json:"id"`
			Size     int64  `json:"size"`
			InUse    bool   `json:"in_use"`
		} `json:"packages"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || code != ExitOK || len(listed.Packages) != 2 || listed.Packages[1].Version != "1.0.0" || listed.Packages[0].Size == 0 {
		t.Errorf("list json: exit %d, %v\n%s", code, err, out)
	}

	code, out, _ = runObjgc(t, "cache", "path", "--cache-dir", cache, "com.example.apache.ApacheHttpServer")
	if want := filepath.Join(cache, "com.example.apache.ApacheHttpServer", "1.0.0", ids[1]) + "\n"; code != ExitOK || out != want {
		t.Errorf("path: exit %d, %q, want %q", code, out, want)
	}
	code, _, errOut = runObjgc(t, "cache", "path", "--cache-dir", cache, "com.example.Nope")
	if code != ExitError || errOut != "objgc: package com.example.Nope: not in the package cache\n" {
		t.Errorf("path of a missing package: exit %d, %q", code, errOut)
	}

	code, out, _ = runObjgc(t, "cache", "verify", "--cache-dir", cache)
	if code != ExitOK || out != "2 packages verified\n" {
		t.Errorf("verify: exit %d, %q", code, out)
	}

	// Prune: refuses without a policy; quiet when nothing to do.
	code, out, errOut = runObjgc(t, "cache", "prune", "--cache-dir", cache)
	if code != ExitError || out != "" || !strings.Contains(errOut, "cache prune needs a policy") {
		t.Errorf("prune without policy: exit %d, %q, %q", code, out, errOut)
	}
	code, out, errOut = runObjgc(t, "cache", "prune", "--cache-dir", cache, "--outdated", "--keep", "2")
	if code != ExitOK || out != "" || errOut != "" {
		t.Errorf("prune with nothing to do: exit %d, %q, %q", code, out, errOut)
	}
	code, out, _ = runObjgc(t, "cache", "prune", "--cache-dir", cache, "--outdated", "--keep", "2", "--verbose")
	if code != ExitOK || out != "freed 0 B in 0 packages\n" {
		t.Errorf("prune --verbose: exit %d, %q", code, out)
	}
	code, out, _ = runObjgc(t, "cache", "prune", "--cache-dir", cache, "--outdated", "--dry-run")
	if code != ExitOK || !strings.HasPrefix(out, "would remove com.example.apache.ApacheHttpServer 0.0.0 "+ids[0][:12]+" (") ||
		!strings.Contains(out, "older version (keeping 1)") || !strings.Contains(out, "would free") {
		t.Errorf("prune --dry-run: exit %d, %q", code, out)
	}

	// A second prune while one runs: exit 4, nothing touched.
	unlockPrune, err := lockfile.TryLockPath(filepath.Join(cache, ".objgc", "prune.lock"), lockfile.Exclusive)
	if unlockPrune == nil || err != nil {
		t.Fatal("cannot take prune.lock", err)
	}
	code, out, errOut = runObjgc(t, "cache", "prune", "--cache-dir", cache, "--outdated")
	unlockPrune()
	if code != ExitLocked || out != "" || errOut != "objgc: cache prune: a prune is already running in "+cache+"; nothing was touched\n" {
		t.Errorf("second prune: exit %d, %q, %q", code, out, errOut)
	}

	code, out, _ = runObjgc(t, "cache", "prune", "--cache-dir", cache, "--outdated", "--format", "json")
	var pruned struct {
		Removed []struct {
			ID     string `json:"id"`
			Reason string `json:"reason"`
		} `json:"removed"`
		Freed int64 `json:"freed"`
	}
	if err := json.Unmarshal([]byte(out), &pruned); err != nil || code != ExitOK || len(pruned.Removed) != 1 || pruned.Removed[0].ID != ids[0] || pruned.Freed == 0 {
		t.Errorf("prune json: exit %d, %v\n%s", code, err, out)
	}

	// A damaged package fails verify.
	os.WriteFile(filepath.Join(cache, "com.example.apache.ApacheHttpServer", "1.0.0", ids[1], "manifest.yaml"), []byte("FullName: x\n"), 0o644)
	code, out, errOut = runObjgc(t, "cache", "verify", "--cache-dir", cache)
	if code != ExitError || !strings.Contains(out, "manifest.yaml: sha256 differs") || !strings.Contains(errOut, "cache verify: 1 problem in") {
		t.Errorf("verify of a damaged cache: exit %d, %q, %q", code, out, errOut)
	}
}

func TestCacheAddRejects(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("../evil")
	w.Write([]byte("x"))
	zw.Close()
	evil := filepath.Join(t.TempDir(), "evil.zip")
	os.WriteFile(evil, buf.Bytes(), 0o644)
	tests := []struct {
		args    []string
		code    int
		errPart string
	}{
		{[]string{"cache", "add", "--cache-dir", cache, evil}, ExitError, `leaves the package`},
		{[]string{"cache", "add", "--cache-dir", cache, "--max-unpacked-size", "1KB", zipTestPackage(t, "io.murano")}, ExitError, `limit of 1000 bytes`},
		{[]string{"cache", "add", "--cache-dir", cache, "--max-unpacked-size", "lots", evil}, ExitError, `--max-unpacked-size: "lots"`},
		{[]string{"cache", "add", "--cache-dir", cache}, ExitError, `needs at least 1 argument`},
		{[]string{"cache", "list", "--cache-dir", cache, "--format", "xml"}, ExitError, `--format must be text or json`},
		{[]string{"cache", "prune", "--cache-dir", cache, "--max-size", "big"}, ExitError, `--max-size: "big"`},
		{[]string{"cache", "prune", "--cache-dir", cache, "--unused-for", "soon"}, ExitError, `--unused-for: "soon"`},
	}
	for _, tt := range tests {
		code, _, errOut := runObjgc(t, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.errPart) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errOut, tt.code, tt.errPart)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(cache, "packages")); len(ents) != 0 {
		t.Errorf("rejected adds left %v", ents)
	}
}

func TestCacheDirFromEnvironment(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "envcache")
	t.Setenv("OBJGC_CACHE_DIR", cache)
	// list never creates a cache: the directory the variable names is
	// reported missing, then used once add created it.
	code, _, errOut := runObjgc(t, "cache", "list")
	if code != ExitError || !strings.Contains(errOut, "no package cache at "+cache) {
		t.Errorf("list of a missing cache: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Errorf("list created %s: %v", cache, err)
	}
	if code, _, errOut := runObjgc(t, "cache", "add", filepath.Join("..", "pkgcache", "testdata", "packages", "com.example.databases.MySql")); code != ExitOK {
		t.Fatalf("add: exit %d, %q", code, errOut)
	}
	code, out, _ := runObjgc(t, "cache", "list")
	if code != ExitOK || !strings.Contains(out, "com.example.databases.MySql") {
		t.Errorf("list: exit %d, %q", code, out)
	}
}

func TestParseCacheSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1024": 1024, "500MB": 500e6, "2GiB": 2 << 30, "1.5k": 1536, "10 kb": 10e3, "3b": 3} {
		if got, err := parseCacheSize(in); err != nil || got != want {
			t.Errorf("parseCacheSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "-1", "1XB"} {
		if _, err := parseCacheSize(in); err == nil {
			t.Errorf("parseCacheSize(%q) accepted", in)
		}
	}
}
