package enginetest

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestVerifyWhileEngineUnpacks: cache verify as a monitoring check on a
// live host. The engine unpacks a package in place under its download
// lock; verify, meeting it halfway, waits for the unpack and verifies the
// whole package (exit 0), never reporting a half-unpacked package as
// damaged. An unpack that outlasts verify's wait is reported as being
// unpacked, exit 3 (in use), not 1. A package really damaged is exit 1.
func TestVerifyWhileEngineUnpacks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	e := startEngine(t, cache)
	archive := zipPackage(t, dir, "things.zip", thingsPackage("1.0.0"))
	first := e.load("d0", "com.example.things", "1.0.0", id1, archive)
	e.end("d0")

	if a := e.do("arm unpack"); a != "armed" {
		t.Fatal(a)
	}
	pkgDir := filepath.Join(cache, "com.example.things", "2.0.0", id2)
	if a := e.do(strings.Join([]string{"load d1 com.example.things 2.0.0", id2, zipPackage(t, dir, "things-2.zip", thingsPackage("2.0.0"))}, " ")); a != "paused unpack "+pkgDir {
		t.Fatalf("engine: %s", a)
	}
	verify := exec.Command(objgcBin, "cache", "verify", "--cache-dir", cache)
	verify.Env = append(os.Environ(), "NO_COLOR=1")
	var out bytes.Buffer
	verify.Stdout, verify.Stderr = &out, &out
	if err := verify.Start(); err != nil {
		t.Fatal(err)
	}
	waitOpenBy(t, verify.Process.Pid, filepath.Join(cache, id2+"_download.lock"))
	if a := e.do("go"); a != "loaded "+pkgDir {
		t.Fatalf("engine: %s", a)
	}
	verify.Wait()
	if code := verify.ProcessState.ExitCode(); code != 0 || out.String() != "2 packages verified (2 unpacked by murano-engine: no digests recorded, manifest and class files parse)\n" {
		t.Fatalf("verify during the engine's unpack: exit %d\n%s", code, out.String())
	}
	e.end("d1")

	if a := e.do("arm unpack"); a != "armed" {
		t.Fatal(a)
	}
	pkgDir = filepath.Join(cache, "com.example.things", "3.0.0", id3)
	if a := e.do(strings.Join([]string{"load d2 com.example.things 3.0.0", id3, zipPackage(t, dir, "things-3.zip", thingsPackage("3.0.0"))}, " ")); a != "paused unpack "+pkgDir {
		t.Fatalf("engine: %s", a)
	}
	code, stdout, stderr := objgc(t, nil, "cache", "verify", "--cache-dir", cache)
	if code != 3 || stdout != pkgDir+": not verified: being unpacked by another process (its download lock is held); verify again later\n" ||
		!strings.Contains(stderr, "1 package being unpacked, not verified") {
		t.Fatalf("verify during an unpack longer than its wait: exit %d\n%s%s", code, stdout, stderr)
	}
	if a := e.do("go"); a != "loaded "+pkgDir {
		t.Fatalf("engine: %s", a)
	}
	e.end("d2")

	if err := os.WriteFile(filepath.Join(first, "Classes", "Base.yaml"), []byte("Name: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = objgc(t, nil, "cache", "verify", "--cache-dir", cache)
	if code != 1 || !strings.Contains(stdout, first+": installed by the engine (no digests recorded), and it does not load") {
		t.Fatalf("verify of a damaged package: exit %d\n%s%s", code, stdout, stderr)
	}
}

// waitOpenBy waits until process pid has the file at path open (it
// waits for its lock), reading /proc/PID/fd.
func waitOpenBy(t *testing.T, pid int, path string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	fdDir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(path); err == nil {
			ents, _ := os.ReadDir(fdDir)
			for _, ent := range ents {
				if gi, err := os.Stat(filepath.Join(fdDir, ent.Name())); err == nil && os.SameFile(fi, gi) {
					return
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d never opened %s", pid, path)
}

// TestVerifyEngineRaceLeavesClassesMissing: two deployments load the same
// package id at once, and murano-engine's own race leaves it without a
// class file while its manifest loads. Deployment A unpacks it under the
// download lock (stopped halfway: Classes/Base.yaml written, no manifest
// yet); deployment B finds the directory, load_from_dir fails (no
// manifest), and B deletes the directory (shutil.rmtree, without the
// download lock), then waits for that lock. A goes on, writes the rest
// (Classes/Thing.yaml, manifest.yaml) into a directory recreated for them,
// and loads it: load_from_dir reads only the manifest. B then finds it
// loads too. Both deployments succeed; the package has lost
// Classes/Base.yaml. verify reports it damaged (exit 1), and it is: a
// deployment using the class fails (package_loader.get_class), which is
// what the stress test's check after verify must ask the engine, not
// load_from_dir alone.
func TestVerifyEngineRaceLeavesClassesMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	a, b := startEngine(t, cache), startEngine(t, cache)
	archive := zipPackage(t, dir, "things.zip", thingsPackage("1.0.0"))
	const id = "000000000000000000000000000000aa"
	pkgDir := filepath.Join(cache, "com.example.things", "1.0.0", id)
	if r := a.do("arm unpack"); r != "armed" {
		t.Fatal(r)
	}
	if r := a.do(strings.Join([]string{"load d0 com.example.things 1.0.0", id, archive}, " ")); r != "paused unpack "+pkgDir {
		t.Fatalf("engine A: %s", r)
	}
	if !exists(filepath.Join(pkgDir, "Classes", "Base.yaml")) || exists(filepath.Join(pkgDir, "manifest.yaml")) {
		t.Fatal("engine A did not stop with Classes/Base.yaml written and no manifest")
	}
	// B's answer comes only once A has gone on: read it aside.
	if _, err := io.WriteString(b.lines.In, strings.Join([]string{"load d0 com.example.things 1.0.0", id, archive}, " ")+"\n"); err != nil {
		t.Fatal(err)
	}
	bDone := make(chan string, 1)
	go func() {
		if b.lines.Out.Scan() {
			bDone <- b.lines.Out.Text()
		} else {
			bDone <- "EOF"
		}
	}()
	// B opens the download lock file after its rmtree of the directory.
	waitOpenBy(t, b.lines.Pid, filepath.Join(cache, id+"_download.lock"))
	if exists(filepath.Join(pkgDir, "Classes", "Base.yaml")) {
		t.Fatal("engine B waits for the download lock, but did not delete the half-unpacked package first")
	}
	if r := a.do("go"); r != "loaded "+pkgDir {
		t.Fatalf("engine A: %s", r)
	}
	select {
	case r := <-bDone:
		if r != "loaded "+pkgDir {
			t.Fatalf("engine B: %s", r)
		}
	case <-time.After(waitLimit):
		t.Fatal("engine B: no answer")
	}
	a.end("d0")
	b.end("d0")
	if exists(filepath.Join(pkgDir, "Classes", "Base.yaml")) || !exists(filepath.Join(pkgDir, "manifest.yaml")) {
		t.Fatal("the race did not leave the package without Classes/Base.yaml")
	}

	code, stdout, stderr := objgc(t, nil, "cache", "verify", "--cache-dir", cache)
	if code != 1 || !strings.Contains(stdout, pkgDir+": installed by the engine (no digests recorded), and it does not load: ") ||
		!strings.Contains(stdout, "Base.yaml") {
		t.Fatalf("verify of the package the engine's race damaged: exit %d\n%s%s", code, stdout, stderr)
	}
	if r := a.do("loaddir " + pkgDir); !strings.HasPrefix(r, "package com.example.things 1.0.0 ") {
		t.Fatalf("load_from_dir of the package the race damaged: %s", r)
	}
	if r := a.do("loadclasses " + pkgDir); !strings.HasPrefix(r, "error PackageClassLoadError ") {
		t.Fatalf("the engine loads the classes of the package verify found damaged: %s", r)
	}
}
