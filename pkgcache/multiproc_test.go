package pkgcache

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/objgc/objgc/internal/lockfile"
)

// The test binary is also the helper process of the multi-process tests:
// with PKGCACHE_HELPER set, TestMain runs one helper role and exits.
func TestMain(m *testing.M) {
	if role := os.Getenv("PKGCACHE_HELPER"); role != "" {
		if err := runHelper(role); err != nil {
			fmt.Fprintf(os.Stderr, "helper %s: %v\n", role, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runHelper runs one role. Arguments come in the environment:
// PKGCACHE_ROOT, PKGCACHE_SOURCES (a list of sources), PKGCACHE_DEADLINE
// (unix ms), PKGCACHE_ITER (iteration limit), PKGCACHE_SEED.
func runHelper(role string) error {
	c, err := Open(os.Getenv("PKGCACHE_ROOT"))
	if err != nil {
		return err
	}
	ctx := context.Background()
	ms, _ := strconv.ParseInt(os.Getenv("PKGCACHE_DEADLINE"), 10, 64)
	deadline := time.UnixMilli(ms)
	iters, _ := strconv.Atoi(os.Getenv("PKGCACHE_ITER"))
	seed, _ := strconv.ParseUint(os.Getenv("PKGCACHE_SEED"), 10, 64)
	rng := rand.New(rand.NewPCG(seed, 1))
	sources := filepath.SplitList(os.Getenv("PKGCACHE_SOURCES"))
	switch role {
	case "add":
		_, err := c.Add(ctx, sources[0])
		return err
	case "user":
		return userLoop(ctx, c, sources, deadline, iters, rng)
	case "pruner":
		n, removed, skipped := 0, 0, 0
		for i := 0; i < iters && time.Now().Before(deadline); i++ {
			res, err := c.Prune(ctx, PruneOptions{Outdated: true, LimitSize: true, MaxSize: 40 << 10})
			if err != nil && !errors.Is(err, ErrPruneRunning) {
				return err
			}
			if err == nil {
				n++
			}
			removed += len(res.Removed)
			skipped += len(res.InUse)
			time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
		}
		fmt.Printf("prunes %d, removed %d packages, skipped %d in use\n", n, removed, skipped)
		return nil
	case "holdusage":
		s := c.NewSession()
		if _, err := s.Package(ctx, sources[0], ""); err != nil {
			return err
		}
		fmt.Println("locked")
		var b [1]byte
		os.Stdin.Read(b[:]) // until the test closes our stdin
		s.Close()
		return nil
	case "holdprune":
		unlock, err := lockfile.TryLockPath(c.lockPath("prune.lock"), lockfile.Exclusive)
		if err != nil || unlock == nil {
			return fmt.Errorf("cannot take prune.lock: %v", err)
		}
		fmt.Println("locked")
		var b [1]byte
		os.Stdin.Read(b[:]) // until the test closes our stdin
		unlock()
		return nil
	}
	return fmt.Errorf("unknown role %q", role)
}

// userLoop adds a random source, then reads it as plan/apply would: a
// session holds the usage lock while the files are checked twice against
// their digests. A missing or half-installed package while the lock is
// held is a failure.
func userLoop(ctx context.Context, c *Cache, sources []string, deadline time.Time, iters int, rng *rand.Rand) error {
	used := 0
	for i := 0; i < iters && time.Now().Before(deadline); i++ {
		src := sources[rng.IntN(len(sources))]
		res, err := c.Add(ctx, src)
		if err != nil {
			return fmt.Errorf("add %s: %w", src, err)
		}
		s := c.NewSession()
		p, err := s.Package(ctx, res.Entry.FullName, res.Entry.Version)
		if errors.Is(err, ErrNotFound) {
			s.Close() // pruned between Add and Session: allowed
			continue
		}
		if err != nil {
			s.Close()
			return err
		}
		for round := 0; round < 2; round++ {
			if probs := verifyEntry(p.Dir, newSHA()); len(probs) != 0 {
				s.Close()
				return fmt.Errorf("package %s seen incomplete under its usage lock: %+v", p.Dir, probs[0])
			}
			time.Sleep(time.Duration(rng.IntN(4)) * time.Millisecond)
		}
		s.Close()
		used++
	}
	fmt.Printf("used %d\n", used)
	return nil
}

func helperCmd(t *testing.T, role, root string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PKGCACHE_HELPER="+role, "PKGCACHE_ROOT="+root)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// stressSources zips the real packages in two revisions each (same
// FullName and version, different bytes: a re-upload).
func stressSources(t *testing.T) []string {
	dir := t.TempDir()
	var out []string
	for _, n := range []string{"com.example.apache.ApacheHttpServer-0.0.0", "com.example.apache.ApacheHttpServer-1.0.0", "com.example.databases.MySql", "com.example.apache.Tomcat", "com.example.WordPress"} {
		for rev := 0; rev < 2; rev++ {
			data := zipPackage(t, testPkg(n), map[string]string{"Resources/rev.txt": strings.Repeat(strconv.Itoa(rev), 8<<10)})
			out = append(out, writeFile(t, dir, fmt.Sprintf("%s-%d.zip", n, rev), data))
		}
	}
	return out
}

// TestConcurrentUsersAndPrune runs 16 user processes that add and read
// packages while another process prunes (outdated + max size) in a loop:
// no package disappears or is seen half-installed while a usage lock is
// held (the Murano spec's guarantee).
func TestConcurrentUsersAndPrune(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	root := filepath.Join(t.TempDir(), "cache")
	if _, err := Open(root); err != nil {
		t.Fatal(err)
	}
	sources := strings.Join(stressSources(t), string(os.PathListSeparator))
	deadline := time.Now().Add(8 * time.Second)
	common := []string{"PKGCACHE_SOURCES=" + sources, "PKGCACHE_DEADLINE=" + strconv.FormatInt(deadline.UnixMilli(), 10)}
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	start := func(role string, env ...string) {
		cmd := helperCmd(t, role, root, append(common, env...)...)
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		outs = append(outs, out)
	}
	start("pruner", "PKGCACHE_ITER=2000", "PKGCACHE_SEED=99")
	start("pruner", "PKGCACHE_ITER=2000", "PKGCACHE_SEED=98") // a second pruner mostly meets ErrPruneRunning
	for i := 0; i < 16; i++ {
		start("user", "PKGCACHE_ITER=60", "PKGCACHE_SEED="+strconv.Itoa(i))
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper %d: %v\n%s", i, err, outs[i])
		} else {
			t.Logf("helper %d: %s", i, strings.TrimSpace(outs[i].String()))
		}
	}
	c, _ := Open(root)
	res, err := c.Verify(context.Background())
	if err != nil || len(res.Problems) != 0 {
		t.Errorf("verify after the run: %+v, %v", res, err)
	}
}

// TestKilledAdd kills an add with SIGKILL at random points, 20 times:
// afterwards packages/ holds only complete packages, Verify passes, the
// next add succeeds and a prune clears the leftovers in tmp/.
func TestKilledAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	root := filepath.Join(t.TempDir(), "cache")
	c, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	// A package with many files, so that the kill lands while unpacking.
	extra := map[string]string{}
	for i := 0; i < 100; i++ {
		extra[fmt.Sprintf("Resources/f%03d.txt", i)] = strings.Repeat("x", 1000+i)
	}
	var srcs []string
	for rev := 0; rev < 21; rev++ {
		extra["Resources/rev.txt"] = strconv.Itoa(rev)
		srcs = append(srcs, writeFile(t, t.TempDir(), "big.zip", zipPackage(t, testPkg("io.murano"), extra)))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	killed := 0
	for i := 0; i < 20; i++ {
		cmd := helperCmd(t, "add", root, "PKGCACHE_SOURCES="+srcs[i])
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(700)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if err != nil && !strings.Contains(err.Error(), "killed") {
			t.Errorf("add %d: %v\n%s", i, err, out.String())
		}
		if err != nil {
			killed++
		}
		res, verr := c.Verify(context.Background())
		if verr != nil || len(res.Problems) != 0 {
			t.Fatalf("after kill %d: %+v, %v", i, res, verr)
		}
	}
	t.Logf("%d of 20 adds killed before they finished", killed)
	// The next add, of the last killed source and of a new one, succeeds:
	// the killed processes' download locks died with them.
	for _, src := range []string{srcs[19], srcs[20]} {
		if _, err := c.Add(context.Background(), src); err != nil {
			t.Fatalf("add after kills: %v", err)
		}
	}
	// Make the dl.* leftovers old enough to be collected.
	c.Now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	res, err := c.Prune(context.Background(), PruneOptions{Outdated: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prune: removed %d outdated ids, %d tmp leftovers", len(res.Removed), res.Leftovers)
	if n := dirNames(t, filepath.Join(root, "tmp")); len(n) != 0 {
		t.Errorf("tmp/ after prune: %v", n)
	}
	list, _ := c.List(context.Background())
	if len(list) != 1 {
		t.Errorf("%d packages left, want the last added one", len(list))
	}
	if v, err := c.Verify(context.Background()); err != nil || len(v.Problems) != 0 {
		t.Errorf("verify: %+v, %v", v, err)
	}
}

// TestSecondPruneProcess: while another process holds the prune lock, a
// prune returns ErrPruneRunning and leaves every file as it was.
func TestSecondPruneProcess(t *testing.T) {
	root := filepath.Join(t.TempDir(), "cache")
	c, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	addZip(t, c, zipPackage(t, testPkg("com.example.apache.ApacheHttpServer-0.0.0"), nil))
	addZip(t, c, zipPackage(t, testPkg("com.example.apache.ApacheHttpServer-1.0.0"), nil))
	cmd := helperCmd(t, "holdprune", root)
	release := holdLock(t, cmd)
	before := dirNames(t, root)
	_, err = c.Prune(context.Background(), PruneOptions{Outdated: true})
	if !errors.Is(err, ErrPruneRunning) {
		t.Errorf("err = %v, want ErrPruneRunning", err)
	}
	if after := dirNames(t, root); strings.Join(before, "\n") != strings.Join(after, "\n") {
		t.Errorf("the refused prune changed the cache")
	}
	release()
	res, err := c.Prune(context.Background(), PruneOptions{Outdated: true})
	if err != nil || len(res.Removed) != 1 {
		t.Errorf("prune after the other one ended: %+v, %v", res, err)
	}
}

// TestReinstallRepairs: a damaged package is not repaired by Add (its id
// is cached), is left alone by Reinstall while another process uses it,
// and is replaced by Reinstall once that process is done.
func TestReinstallRepairs(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "cache")
	c, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	src := writeFile(t, t.TempDir(), "mysql.zip", zipPackage(t, testPkg("com.example.databases.MySql"), nil))
	res, err := c.Add(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	class := filepath.Join(res.Entry.Dir, "Classes", "MySql.yaml")
	if err := os.WriteFile(class, []byte("Name: damaged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	damaged := func() int {
		v, err := c.Verify(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(v.Problems)
	}
	if damaged() == 0 {
		t.Fatal("verify does not see the damage")
	}
	if res, err := c.Add(ctx, src); err != nil || res.Installed || damaged() == 0 {
		t.Fatalf("Add: %+v, %v; want already cached, still damaged", res, err)
	}

	cmd := helperCmd(t, "holdusage", root, "PKGCACHE_SOURCES=com.example.databases.MySql")
	release := holdLock(t, cmd)
	before := dirNames(t, root)
	if _, err := c.Reinstall(ctx, src); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "in use") {
		t.Errorf("Reinstall while in use: %v, want ErrLocked", err)
	}
	if after := dirNames(t, root); strings.Join(before, "\n") != strings.Join(after, "\n") || damaged() == 0 {
		t.Errorf("the refused reinstall changed the cache")
	}
	release()
	res, err = c.Reinstall(ctx, src)
	if err != nil || !res.Installed || !res.Replaced {
		t.Fatalf("Reinstall: %+v, %v", res, err)
	}
	if n := damaged(); n != 0 {
		t.Errorf("%d problems after the reinstall", n)
	}
	if n := dirNames(t, filepath.Join(root, "tmp")); len(n) != 0 {
		t.Errorf("tmp/ holds %v", n)
	}
}

// holdLock starts cmd, a helper process that takes a lock, says
// "locked\n" on stdout and holds the lock until its stdin closes; it
// returns once the lock is held. release closes stdin and waits for the
// helper to end.
func holdLock(t *testing.T, cmd *exec.Cmd) (release func()) {
	t.Helper()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var b [7]byte
	if _, err := stdout.Read(b[:]); err != nil || string(b[:]) != "locked\n" {
		t.Fatalf("helper said %q, %v", b, err)
	}
	return func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
}
