package enginetest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Package ids as the catalog gives them (opaque to objgc).
const (
	id1 = "0a6ad6d5b5c94c8e8b1f0c1d2e3f4a51"
	id2 = "0a6ad6d5b5c94c8e8b1f0c1d2e3f4a52"
	id3 = "0a6ad6d5b5c94c8e8b1f0c1d2e3f4a53"
)

// TestEngineHoldsOldVersionDuringPrune: the engine has unpacked versions
// 1.0.0 and 2.0.0 of one FullName, and a deployment still uses 1.0.0.
// prune --outdated --keep 1 skips it (exit 3, the package intact and
// loadable); once the deployment ended, prune removes it and keeps 2.0.0;
// the engine then loads both again (1.0.0 downloaded anew, 2.0.0 from the
// cache).
func TestEngineHoldsOldVersionDuringPrune(t *testing.T) {
	t.Parallel()
	v := startTwoVersions(t)
	e, cache, zip1, old, newer := v.engine, v.cache, v.zip1, v.old, v.newer

	code, out, errOut := objgc(t, nil, "cache", "prune", "--cache-dir", cache, "--outdated", "--keep", "1")
	if code != 3 || !regexp.MustCompile(`(?m)^skipped com\.example\.things 1\.0\.0 `+id1[:12]+`: in use`).MatchString(out) {
		t.Fatalf("prune while the engine uses 1.0.0: exit %d\n%s%s", code, out, errOut)
	}
	if a := e.do("loaddir " + old); !strings.HasPrefix(a, "package com.example.things 1.0.0 ") {
		t.Fatalf("the package in use after prune: %s", a)
	}

	e.end("d1")
	code, out, errOut = objgc(t, nil, "cache", "prune", "--cache-dir", cache, "--outdated", "--keep", "1")
	if code != 0 || !regexp.MustCompile(`(?m)^removed com\.example\.things 1\.0\.0 `+id1[:12]+` `).MatchString(out) {
		t.Fatalf("prune once free: exit %d\n%s%s", code, out, errOut)
	}
	if exists(old) || !exists(newer) {
		t.Fatalf("after prune: 1.0.0 there %v, 2.0.0 there %v", exists(old), exists(newer))
	}

	if got := e.load("d3", "com.example.things", "1.0.0", id1, zip1); got != old {
		t.Errorf("1.0.0 loaded again into %s, want %s", got, old)
	}
	e.load("d3", "com.example.things", "2.0.0", id2, "-")
	e.end("d3")
}

// twoVersions is an engine on a cache of its own in which deployment d1
// uses com.example.things 1.0.0 (id1, served as zip1, unpacked in old)
// and 2.0.0 (id2, in newer) was loaded by d2, which has ended.
type twoVersions struct {
	engine      *engine
	cache, zip1 string
	old, newer  string
}

func startTwoVersions(t *testing.T) twoVersions {
	t.Helper()
	dir := t.TempDir()
	v := twoVersions{cache: filepath.Join(dir, "cache")}
	v.engine = startEngine(t, v.cache)
	v.zip1 = zipPackage(t, dir, "things-1.zip", thingsPackage("1.0.0"))
	zip2 := zipPackage(t, dir, "things-2.zip", thingsPackage("2.0.0"))
	v.old = v.engine.load("d1", "com.example.things", "1.0.0", id1, v.zip1)
	v.newer = v.engine.load("d2", "com.example.things", "2.0.0", id2, zip2)
	v.engine.end("d2")
	return v
}

// TestEngineCleanupSparesApplysPackage: objgc apply reads the class
// hierarchy of com.example.Thing from the package the engine unpacked
// (id1) and runs the destroy hook of its parent class com.example.Base,
// which waits. Meanwhile the engine unpacks id2 of the same FullName and
// version (a re-uploaded package) and runs its cleanup of the other ids:
// it leaves id1 alone, because apply holds its usage lock. Once apply has
// ended, the next cleanup (after the engine unpacks id3) removes id1.
func TestEngineCleanupSparesApplysPackage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	e := startEngine(t, cache)
	archive := zipPackage(t, dir, "things.zip", thingsPackage("1.0.0"))
	first := e.load("d1", "com.example.things", "1.0.0", id1, archive)
	e.end("d1")

	hooks := filepath.Join(dir, "hooks", "com.example.Base")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	hook := "#!/bin/sh\n: > \"$TEST_DIR/started\"\nwhile [ ! -e \"$TEST_DIR/go\" ]; do sleep 0.05; done\n"
	if err := os.WriteFile(filepath.Join(hooks, "destroy"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "m.json")
	if err := os.WriteFile(model, []byte(`{
  "Objects": {"?": {"id": "env", "type": "io.murano.Environment"}, "apps": []},
  "ObjectsCopy": {"?": {"id": "env", "type": "io.murano.Environment"}, "apps": [
    {"?": {"id": "t1", "type": "com.example.Thing/1.0.0@com.example.things"}}
  ]},
  "Attributes": []
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	apply := exec.Command(objgcBin, "apply", "--cache-dir", cache, "--hooks-dir", filepath.Join(dir, "hooks"), model)
	apply.Env = append(os.Environ(), "NO_COLOR=1", "TEST_DIR="+dir)
	var out bytes.Buffer
	apply.Stdout, apply.Stderr = &out, &out
	if err := apply.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- apply.Wait() }()
	defer func() {
		os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	}()
	waitFile(t, filepath.Join(dir, "started"))

	second := e.load("d2", "com.example.things", "1.0.0", id2, archive)
	if !exists(first) || !exists(filepath.Join(cache, id1+"_usage.lock")) {
		t.Fatalf("the engine's cleanup removed the package apply uses (%s there: %v)", first, exists(first))
	}
	if a := e.do("loaddir " + first); !strings.HasPrefix(a, "package com.example.things 1.0.0 ") {
		t.Fatalf("the package apply uses: %s", a)
	}

	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("apply: %v\n%s", err, out.String())
	}
	if m, _ := os.ReadFile(model); bytes.Contains(m, []byte(`"t1"`)) {
		t.Fatalf("apply did not destroy t1:\n%s\n%s", m, out.String())
	}

	e.load("d3", "com.example.things", "1.0.0", id3, archive)
	if exists(first) || exists(filepath.Join(cache, id1+"_usage.lock")) {
		t.Errorf("the engine's cleanup left %s after apply ended", first)
	}
	if !exists(second) {
		t.Errorf("the engine's cleanup removed %s, which deployment d2 uses", second)
	}
	e.end("d2")
	e.end("d3")
}

// TestObjgcAddedPackageLoadsInEngine: a package objgc cache add unpacked
// is one Murano's loader loads from its directory (load_from_dir), and
// one the engine's ApiPackageLoader takes from the cache without asking
// the catalog, when the catalog's id is the one objgc gave it.
func TestObjgcAddedPackageLoadsInEngine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	archive := zipPackage(t, dir, "things.zip", thingsPackage("1.0.0"))
	if code, out, errOut := objgc(t, nil, "cache", "add", "--cache-dir", cache, archive); code != 0 {
		t.Fatalf("cache add: exit %d\n%s%s", code, out, errOut)
	}
	ids, err := os.ReadDir(filepath.Join(cache, "com.example.things", "1.0.0"))
	if err != nil || len(ids) != 1 {
		t.Fatalf("cache add left %v, %v", ids, err)
	}
	id := ids[0].Name()
	pkgDir := filepath.Join(cache, "com.example.things", "1.0.0", id)
	e := startEngine(t, cache)
	if a := e.do("loaddir " + pkgDir); a != "package com.example.things 1.0.0 com.example.Base,com.example.Thing" {
		t.Fatalf("load_from_dir(%s): %s", pkgDir, a)
	}
	if got := e.load("d1", "com.example.things", "1.0.0", id, "-"); got != pkgDir {
		t.Fatalf("the engine loaded %s, want %s", got, pkgDir)
	}
	e.end("d1")
}

// TestCacheListMuranoConfig: cache list --murano-config finds the cache of
// the engine that murano.conf configures, with packages_cache set and
// with the engine's default directory under its TMPDIR, and shows the
// engine's package in use while a deployment holds it.
func TestCacheListMuranoConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := zipPackage(t, dir, "things.zip", thingsPackage("1.0.0"))
	set := filepath.Join(dir, "cache")
	for _, c := range []struct {
		name, cache, conf string
	}{
		{"packages_cache", set, "[DEFAULT]\ndebug = false\n\n[engine]\n# where packages go\npackages_cache = " + set + "\n"},
		{"default", "-", "[engine]\nenable_packages_cache = true\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := []string{"TMPDIR=" + tmp}
			e := startEngine(t, c.cache, env...)
			conf := filepath.Join(dir, c.name+".conf")
			if err := os.WriteFile(conf, []byte(c.conf), 0o644); err != nil {
				t.Fatal(err)
			}
			e.load("d1", "com.example.things", "1.0.0", id1, archive)
			line := regexp.MustCompile(`(?m)^com\.example\.things +1\.0\.0 +` + id1[:12] + ` .* yes +engine$`)
			code, out, errOut := objgc(t, env, "cache", "list", "--murano-config", conf)
			if code != 0 || !line.MatchString(out) {
				t.Fatalf("cache list --murano-config while in use: exit %d\n%s%s", code, out, errOut)
			}
			e.end("d1")
			line = regexp.MustCompile(`(?m)^com\.example\.things +1\.0\.0 +` + id1[:12] + ` .* no +engine$`)
			code, out, errOut = objgc(t, env, "cache", "list", "--murano-config", conf)
			if code != 0 || !line.MatchString(out) {
				t.Fatalf("cache list --murano-config once free: exit %d\n%s%s", code, out, errOut)
			}
		})
	}
}

// TestEnginePackageHooksNeverRun: a hook shipped in a package the engine
// unpacked (a tenant's upload to the catalog) never runs on the engine
// host, not even made executable there (the engine unpacks with Python's
// zipfile extractall, murano.packages.load_utils.load_from_file, which
// keeps no file modes): plan warns hooks_ignored. The same archive added
// with objgc cache add keeps its hook executable, and plan finds it ready
// to run.
func TestEnginePackageHooksNeverRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := thingsPackage("1.0.0")
	p["hooks/com.example.Base/destroy"] = "#!/bin/sh\nexit 0\n"
	archive := zipPackage(t, dir, "things.zip", p)
	engineCache := filepath.Join(dir, "engine")
	e := startEngine(t, engineCache)
	pkgDir := e.load("d1", "com.example.things", "1.0.0", id1, archive)
	e.end("d1")
	hook := filepath.Join(pkgDir, "hooks", "com.example.Base", "destroy")
	fi, err := os.Stat(hook)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o111 != 0 {
		t.Fatalf("the engine unpacked %s with mode %v: executable after all", hook, fi.Mode())
	}
	model := filepath.Join(dir, "m.json")
	if err := os.WriteFile(model, []byte(`{
  "Objects": {"?": {"id": "env", "type": "io.murano.Environment"}, "apps": []},
  "ObjectsCopy": {"?": {"id": "env", "type": "io.murano.Environment"}, "apps": [
    {"?": {"id": "t1", "type": "com.example.Thing/1.0.0@com.example.things"}}
  ]},
  "Attributes": []
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := objgc(t, nil, "plan", "--cache-dir", engineCache, model)
	if code != 0 || strings.Contains(out, "hook destroy: "+hook) || !strings.Contains(out, "hooks_ignored: package com.example.things 1.0.0 (id "+id1+") was unpacked by murano-engine") {
		t.Fatalf("plan on the engine's package, its hook made executable: exit %d\n%s%s", code, out, errOut)
	}

	added := filepath.Join(dir, "added")
	if code, out, errOut := objgc(t, nil, "cache", "add", "--cache-dir", added, archive); code != 0 {
		t.Fatalf("cache add: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = objgc(t, nil, "plan", "--cache-dir", added, model)
	if code != 0 || !strings.Contains(out, "hook destroy: "+added) || strings.Contains(out, "hook_cannot_run") {
		t.Fatalf("plan on the package objgc added: exit %d\n%s%s", code, out, errOut)
	}
}
