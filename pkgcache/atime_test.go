package pkgcache

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestPlanPruneEngineAtime: --unused-for selects a package the engine
// unpacked only when access times show the engine's use: never when they
// cannot be trusted, and only when older than the policy by the access
// times' slack (a day under relatime); a package objgc added is judged by
// objgc's own marker either way.
func TestPlanPruneEngineAtime(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	engine := Entry{FullName: "e", Version: "1.0.0", ID: "e1", InstalledBy: installedByEngine, Installed: now.Add(-10 * day), LastUse: now.Add(-2 * day)}
	added := Entry{FullName: "o", Version: "1.0.0", ID: "o1", InstalledBy: installedByObjgc, Installed: now.Add(-10 * day), LastUse: now.Add(-2 * day)}
	for _, tc := range []struct {
		name      string
		untrusted bool
		slack     time.Duration
		unusedFor time.Duration
		want      string
	}{
		{"strictatime", false, 0, 36 * time.Hour, "e1 o1"},
		{"relatime, older by more than a day", false, day, 20 * time.Hour, "e1 o1"},
		{"relatime, within a day of the policy", false, day, 36 * time.Hour, "o1"},
		{"noatime", true, 0, time.Hour, "o1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planPrune([]Entry{engine, added}, prunePolicy{UnusedFor: tc.unusedFor, EngineAtimeUntrusted: tc.untrusted, EngineAtimeSlack: tc.slack}, now)
			var got []string
			for _, r := range p.selected {
				got = append(got, r.ID)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("selected %v, want %s", got, tc.want)
			}
		})
	}
}

// TestPruneNoatime: on a file system mounted noatime (a tmpfs mounted
// here, as root), a package the engine deployed today looks unused since
// its unpack. prune --unused-for selects none of the engine's packages,
// says so once and points to --outdated and --max-size; objgc's own
// record of a use (a probe that found the usage lock held) still counts
// for --max-size's order.
func TestPruneNoatime(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("mounting a noatime tmpfs needs root on Linux")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "noatime,size=16m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("mount -t tmpfs -o noatime: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	root := filepath.Join(mnt, "cache")
	probe, _ := openAt(root)
	used := engineUnpack(t, probe, testPkg("com.example.databases.MySql"), "0a1b2c3d4e5f60718293a4b5c6d7e8f9")
	old := time.Now().Add(-90 * 24 * time.Hour)
	os.Chtimes(used.Dir, old, old)
	os.Chtimes(filepath.Join(used.Dir, "manifest.yaml"), old, old)
	c, err := OpenExisting(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() }) // before the umount: it holds the root open
	probe.Close()
	ctx := context.Background()
	res, err := c.Prune(ctx, PruneOptions{UnusedFor: 30 * 24 * time.Hour})
	if err != nil || len(res.Removed) != 0 || !isDir(used.Dir) {
		t.Fatalf("prune --unused-for 30d on noatime: %+v, %v", res, err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "--unused-for selects none of the 1 package murano-engine unpacked: "+mnt) ||
		!strings.Contains(res.Warnings[0], "mounted noatime") || !strings.Contains(res.Warnings[0], "--outdated") || !strings.Contains(res.Warnings[0], "--max-size") {
		t.Errorf("warnings: %q", res.Warnings)
	}
}

// TestInUseProbeRecordsUse: a prune whose probe finds a package's usage
// lock held records a use in objgc's marker, so that a package the
// engine keeps using does not look unused where access times say
// nothing; a listing (which only reads) records nothing.
func TestInUseProbeRecordsUse(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	probe, _ := openAt(root)
	e := engineUnpack(t, probe, testPkg("com.example.databases.MySql"), "0a1b2c3d4e5f60718293a4b5c6d7e8f9")
	c, err := OpenExisting(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.lastUsePath(e.ID)); err == nil {
		t.Fatal("a marker before any use")
	}
	unlock, err := c.lockAt(ctx, c.usageLockPath(e.ID), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	before := time.Now().Add(-time.Second)
	if _, err := c.List(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.lastUsePath(e.ID)); err == nil {
		t.Fatal("a listing wrote a marker")
	}
	if res, err := c.Prune(ctx, PruneOptions{LimitSize: true}); err != nil || len(res.InUse) != 1 {
		t.Fatalf("prune --max-size 0 of a package in use: %+v, %v", res, err)
	}
	if st, err := os.Stat(c.lastUsePath(e.ID)); err != nil || st.ModTime().Before(before) {
		t.Fatalf("a prune that found the package in use left no marker of the use: %v", err)
	}
}
