//go:build linux

package pkgcache

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/objgc/objgc/internal/muranopy"
	"github.com/objgc/objgc/internal/testbin"
)

// The tests in this file put objgc's removals next to murano-engine's own
// ApiPackageLoader (internal/enginetest/testdata/engine.py: Murano 14's
// code, only its catalog client replaced) in real processes, at the
// interleavings where a deleted lock file loses a deployment's lock or
// fails the deployment. They need /usr/bin/python3 with python3-murano;
// without it they skip, except under CI=true, where they fail.

const enginePy = "../internal/enginetest/testdata/engine.py"

// engineWait bounds every wait for the engine: past it the test hung.
const engineWait = 2 * time.Minute

// engineProc is a running engine.py: Send writes a command line, Next
// reads the next answer line, Do both.
type engineProc struct {
	*testbin.Lines
}

func startEngineProc(t *testing.T, cache string) *engineProc {
	t.Helper()
	muranopy.Require(t, "import murano.common.config, murano.engine.package_loader")
	return &engineProc{testbin.StartLines(t, exec.Command(muranopy.Python, enginePy, cache), "engine", engineWait)}
}

func (e *engineProc) must(command, prefix string) string {
	e.T.Helper()
	a := e.Do(command)
	if !strings.HasPrefix(a, prefix) {
		e.T.Fatalf("engine: %s: %s, want %s...", command, a, prefix)
	}
	return a
}

// waitOpenBy waits until process pid has the file at path open (it has
// opened it and waits for its lock), reading /proc/PID/fd.
func waitOpenBy(t *testing.T, pid int, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	fdDir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	deadline := time.Now().Add(engineWait)
	for time.Now().Before(deadline) {
		names, _ := procNames(fdDir)
		for _, n := range names {
			if gi, err := os.Stat(filepath.Join(fdDir, n)); err == nil && os.SameFile(fi, gi) {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d never opened %s", pid, path)
}

// engineZip writes the archive the stand-in catalog serves for a package.
func engineZip(t *testing.T, name string) string {
	return writeFile(t, t.TempDir(), "pkg.zip", zipPackage(t, testPkg(name), nil))
}

const (
	mysql   = "com.example.databases.MySql"
	engID1  = "0a6ad6d5b5c94c8e8b1f0c1d2e3f4a51"
	engID2  = "0a6ad6d5b5c94c8e8b1f0c1d2e3f4a52"
	version = "0.0.0"
)

// TestRemovalDelayedWhileDeploymentStarts: objgc takes the usage lock of
// a package to remove it and is slow to go on; meanwhile a deployment
// starts, opens the usage lock file and waits for its shared lock. Once
// the removal is done, the deployment gets its lock, finds the package
// gone and unpacks it again. Its lock must be on the file the path names:
// the next removal must find the package in use. (When the removal
// deleted the lock files, the deployment held a lock on a deleted file and
// the next prune removed the package under it.)
func TestRemovalDelayedWhileDeploymentStarts(t *testing.T) {
	ctx := context.Background()
	c := openCache(t)
	zip := engineZip(t, mysql)
	e := startEngineProc(t, c.Root())
	dir := strings.TrimPrefix(e.must(strings.Join([]string{"load d0", mysql, version, engID1, zip}, " "), "loaded "), "loaded ")
	e.must("end d0", "ended")

	claimed, resume := make(chan string), make(chan struct{})
	testHookClaimed = func(id string) {
		claimed <- id
		<-resume
	}
	defer func() { testHookClaimed = nil }()
	removed := make(chan RemoveResult, 1)
	go func() {
		res, err := c.Remove(ctx, engID1)
		if err != nil {
			t.Error(err)
		}
		removed <- res
	}()
	<-claimed
	testHookClaimed = nil
	e.Send(strings.Join([]string{"load d1", mysql, version, engID1, zip}, " "))
	waitOpenBy(t, e.Pid, c.usageLockPath(engID1))
	close(resume)
	if res := <-removed; len(res.Removed) != 1 {
		t.Fatalf("the delayed removal: %+v", res)
	}
	if a := e.Next("load d1"); a != "loaded "+dir {
		t.Fatalf("the deployment that started during the removal: %s", a)
	}
	res, err := c.Remove(ctx, engID1)
	if err != nil || len(res.Removed) != 0 || len(res.InUse) != 1 || !isDir(dir) {
		t.Fatalf("removal while the deployment holds the package: %+v, %v (package there: %v)", res, err, isDir(dir))
	}
	assertLockFilesKept(t, c, engID1)
	pr, err := c.Prune(ctx, PruneOptions{LimitSize: true})
	if err != nil || len(pr.Removed) != 0 || len(pr.InUse) != 1 || !isDir(dir) {
		t.Fatalf("prune while the deployment holds the package: %+v, %v", pr, err)
	}
	e.must("end d1", "ended")
	if res, err := c.Remove(ctx, engID1); err != nil || len(res.Removed) != 1 || isDir(dir) {
		t.Fatalf("removal once the deployment ended: %+v, %v", res, err)
	}
}

// TestRemovalBetweenEnginesTwoOpens: the engine's shared usage lock
// creates its file (O_CREAT|O_EXCL) and then opens it again read-only
// (murano.utils.SharedInterProcessLock._do_open). A removal between the
// two may remove the package (nobody holds it yet) but must leave the
// lock file, or the deployment fails with FileNotFoundError.
func TestRemovalBetweenEnginesTwoOpens(t *testing.T) {
	ctx := context.Background()
	c := openCache(t)
	zip := engineZip(t, mysql)
	e := startEngineProc(t, c.Root())
	dir := strings.TrimPrefix(e.must(strings.Join([]string{"load d0", mysql, version, engID1, zip}, " "), "loaded "), "loaded ")
	e.must("end d0", "ended")

	e.must("arm open", "armed")
	e.must(strings.Join([]string{"load d1", mysql, version, engID1, zip}, " "), "paused open ")
	if res, err := c.Remove(ctx, engID1); err != nil || len(res.Removed) != 1 {
		t.Fatalf("removal between the engine's two opens: %+v, %v", res, err)
	}
	if a := e.Do("go"); a != "loaded "+dir {
		t.Fatalf("the deployment whose lock file was opened during the removal: %s", a)
	}
	if res, err := c.Remove(ctx, engID1); err != nil || len(res.InUse) != 1 {
		t.Fatalf("removal while the deployment holds the package: %+v, %v", res, err)
	}
	e.must("end d1", "ended")
}

// TestEngineCleanupOrphanedLock: the engine's own cleanup makes an
// orphaned lock. It holds the exclusive usage lock of a stale id (id1)
// while a deployment in another engine process opens that lock file and
// waits; the cleanup removes the package, releases the lock and deletes
// both lock files; the deployment gets its lock on the deleted file,
// unpacks id1 again and uses it, its lock seen by nobody at the path.
// objgc must count it as in use: found in /proc/PID/fd, or, where that
// cannot be read, because the package's usage lock file is missing.
func TestEngineCleanupOrphanedLock(t *testing.T) {
	ctx := context.Background()
	c := openCache(t)
	zip := engineZip(t, mysql)
	cleaner := startEngineProc(t, c.Root())
	deployer := startEngineProc(t, c.Root())
	dir := strings.TrimPrefix(cleaner.must(strings.Join([]string{"load d0", mysql, version, engID1, zip}, " "), "loaded "), "loaded ")
	cleaner.must("end d0", "ended")

	// A re-upload: the cleaner unpacks id2, and its cleanup of id1 stops
	// holding id1's exclusive usage lock.
	cleaner.must("arm cleanup", "armed")
	cleaner.must(strings.Join([]string{"load d1", mysql, version, engID2, zip}, " "), "paused cleanup "+dir)
	deployer.Send(strings.Join([]string{"load d2", mysql, version, engID1, zip}, " "))
	waitOpenBy(t, deployer.Pid, c.usageLockPath(engID1))
	if a := cleaner.Do("go"); !strings.HasPrefix(a, "loaded ") {
		t.Fatalf("the cleaner's load: %s", a)
	}
	if a := deployer.Next("load d2"); a != "loaded "+dir {
		t.Fatalf("the deployment that waited for the cleanup: %s", a)
	}
	if _, err := os.Lstat(c.usageLockPath(engID1)); err == nil {
		t.Fatal("the engine's cleanup left the usage lock file: no orphaned lock to test")
	}

	res, err := c.Remove(ctx, engID1)
	if err != nil || len(res.Removed) != 0 || len(res.InUse) != 1 || !isDir(dir) || !strings.Contains(res.InUse[0].InUseReason, "deleted usage lock file open") {
		t.Fatalf("removal while a deployment holds an orphaned lock: %+v, %v (package there: %v)", res, err, isDir(dir))
	}
	// The cleaner's deployment still holds id2: both stay.
	pr, err := c.Prune(ctx, PruneOptions{LimitSize: true})
	if err != nil || len(pr.Removed) != 0 || inUseReason(pr, engID1) == "" || !isDir(dir) || !pr.OrphansChecked {
		t.Fatalf("prune while a deployment holds an orphaned lock: %+v, %v", pr, err)
	}
	list, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range list {
		if l.ID == engID1 && !l.InUse {
			t.Errorf("list: %s not in use", l.ID)
		}
	}

	// Where /proc cannot be read, the missing lock file keeps it.
	procRoot = filepath.Join(t.TempDir(), "noproc")
	defer func() { procRoot = "/proc" }()
	// The usage lock file is created by the removal above: delete it
	// again, as the engine's cleanup left it.
	os.Remove(c.usageLockPath(engID1))
	pr, err = c.Prune(ctx, PruneOptions{LimitSize: true})
	if err != nil || len(pr.Removed) != 0 || !isDir(dir) || pr.OrphansChecked || !strings.Contains(inUseReason(pr, engID1), "usage lock file is missing") {
		t.Fatalf("prune without /proc: %+v, %v", pr, err)
	}
	if _, err := os.Lstat(c.usageLockPath(engID1)); err == nil {
		t.Error("prune without /proc created the missing usage lock file")
	}
	procRoot = "/proc"

	deployer.must("end d2", "ended")
	cleaner.must("end d1", "ended")
	if res, err := c.Remove(ctx, engID1); err != nil || len(res.Removed) != 1 || isDir(dir) {
		t.Fatalf("removal once the deployment ended: %+v, %v", res, err)
	}
}

// inUseReason is the InUseReason prune gave id, "" when it is not in
// pr.InUse.
func inUseReason(pr PruneResult, id string) string {
	for _, r := range pr.InUse {
		if r.ID == id {
			return r.InUseReason
		}
	}
	return ""
}
