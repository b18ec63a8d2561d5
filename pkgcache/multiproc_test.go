package pkgcache

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/objgc/objgc/internal/lockfile"
	"github.com/objgc/objgc/internal/stresstest"
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
	c, err := openAt(os.Getenv("PKGCACHE_ROOT"))
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
	case "openadd": // as a command does: Open, then Add
		c, err := Open(os.Getenv("PKGCACHE_ROOT"))
		if err != nil {
			return err
		}
		_, err = c.Add(ctx, sources[0])
		return err
	case "add":
		_, err := c.Add(ctx, sources[0])
		return err
	case "user":
		return userLoop(ctx, c, sources, deadline, iters, rng)
	case "pruner":
		// SIGTERM ends the loop (the test sends it once the users are
		// done); the counts are printed either way.
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, syscall.SIGTERM)
		n, removed, skipped := 0, 0, 0
		for i := 0; i < iters && time.Now().Before(deadline) && len(stop) == 0; i++ {
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
	case "holdusageid":
		// As an objgc of the old layout reading package sources[0] (an
		// id): the usage lock alone, no lookup.
		unlock, err := c.acquireUsage(ctx, sources[0])
		if err != nil {
			return err
		}
		fmt.Println("locked")
		var b [1]byte
		os.Stdin.Read(b[:]) // until the test closes our stdin
		unlock()
		return nil
	case "holdprune":
		unlock, err := c.tryLockAt(c.pruneLockPath(), lockfile.Exclusive)
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
			if probs := c.verifyEntry(ctx, entryKey{p.FullName, p.Version, p.ID}, p.Dir, newSHA()); len(probs) != 0 {
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

// TestConcurrentUsersAndPrune runs user processes that add and read
// packages while two other processes prune (outdated + max size) in a
// loop: no package disappears or is seen half-installed while a usage
// lock is held (the Murano spec's guarantee). The default run has 4 users
// doing 15 rounds each; OBJGC_STRESS=1 runs 16 users of 60 rounds for up
// to 8 seconds (18 processes). Either way a run must have overlapped:
// prunes removed packages, and met packages a user held a usage lock on.
// One that did not is run again, up to 5 runs, after which the test fails
// instead of passing without having tested anything.
func TestConcurrentUsersAndPrune(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	stress, seed := stresstest.Mode(t)
	// A run checks its invariants whatever happens, but tests the race
	// only if a prune met a package a user held. Whether one did depends
	// on how the processes were scheduled, so a run that did not overlap
	// is run again, with the next seeds, a few times before the test
	// gives up.
	const attempts = 5
	for attempt := range uint64(attempts) {
		used, removed, inUse := concurrentUsersAndPrune(t, stress, seed+attempt*1000)
		if used > 0 && removed > 0 && inUse > 0 {
			return
		}
		t.Logf("run %d did not overlap: users used %d packages, prunes removed %d and met %d in use", attempt+1, used, removed, inUse)
	}
	t.Errorf("none of %d runs overlapped: nothing was tested", attempts)
}

// concurrentUsersAndPrune is one run of TestConcurrentUsersAndPrune on a
// cache of its own: it fails the test on any broken invariant and
// returns what the users used, what the prunes removed and how often they
// met a package in use.
func concurrentUsersAndPrune(t *testing.T, stress bool, seed uint64) (used, removed, inUse int) {
	users, rounds, limit := 4, 15, 30*time.Second
	if stress {
		users, rounds, limit = 16, 60, 8*time.Second
	}
	root := filepath.Join(t.TempDir(), "cache")
	if _, err := Open(root); err != nil {
		t.Fatal(err)
	}
	sources := strings.Join(stressSources(t), string(os.PathListSeparator))
	// The deadline bounds a stress run; the default run ends by its
	// rounds, the deadline only stops a hung one.
	deadline := time.Now().Add(limit)
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
	iter := func(n int) string { return "PKGCACHE_ITER=" + strconv.Itoa(n) }
	seedEnv := func(k uint64) string { return "PKGCACHE_SEED=" + strconv.FormatUint(seed+k, 10) }
	start("pruner", iter(2000), seedEnv(99))
	start("pruner", iter(2000), seedEnv(98)) // a second pruner mostly meets ErrPruneRunning
	for i := 0; i < users; i++ {
		start("user", iter(rounds), seedEnv(uint64(i)))
	}
	// The pruners loop until the deadline or 2000 rounds: stop them once
	// the users are done.
	for i := 2; i < len(cmds); i++ {
		if err := cmds[i].Wait(); err != nil {
			t.Errorf("user %d: %v\n%s", i-2, err, outs[i])
			continue
		}
		var n int
		fmt.Sscanf(outs[i].String(), "used %d", &n)
		used += n
		t.Logf("user %d: %s", i-2, strings.TrimSpace(outs[i].String()))
	}
	for i := 0; i < 2; i++ {
		cmds[i].Process.Signal(syscall.SIGTERM)
		cmds[i].Wait()
		var prunes, n, skipped int
		fmt.Sscanf(outs[i].String(), "prunes %d, removed %d packages, skipped %d in use", &prunes, &n, &skipped)
		removed += n
		inUse += skipped
		t.Logf("pruner %d: %s", i, strings.TrimSpace(outs[i].String()))
	}
	c, _ := Open(root)
	res, err := c.Verify(context.Background())
	if err != nil || len(res.Problems) != 0 {
		t.Errorf("verify after the run: %+v, %v", res, err)
	}
	return used, removed, inUse
}

// TestKilledAdd kills adds with SIGKILL while they unpack: afterwards
// packages/ holds only complete packages, Verify passes, the next add
// succeeds and a prune clears the leftovers in tmp/. The default run
// kills 5 adds, each once its staging folder holds a number of files
// drawn from the seed: every kill lands mid-unpack. OBJGC_STRESS=1 kills
// 20 adds at random moments: after a random number of staged files (0:
// as soon as the add puts anything in tmp/) and a random delay of up to
// 3 ms, which may also land after the add ended. (Kills after a random
// delay from the start, 0 to 700 ms, mostly killed adds that had ended:
// 5 of 20 on a busy machine.) At least half of the kills must land
// mid-run (a leftover in tmp/ shows it), else the test fails instead of
// passing without having tested anything.
func TestKilledAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	stress, seed := stresstest.Mode(t)
	kills := 5
	if stress {
		kills = 20
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
	for rev := 0; rev <= kills; rev++ {
		extra["Resources/rev.txt"] = strconv.Itoa(rev)
		srcs = append(srcs, writeFile(t, t.TempDir(), "big.zip", zipPackage(t, testPkg("io.murano"), extra)))
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	tmp := filepath.Join(root, metaDirName, "tmp")
	killed, midRun := 0, 0
	for i := 0; i < kills; i++ {
		before := map[string]bool{}
		for _, n := range dirNames(t, tmp) {
			before[n] = true
		}
		cmd := helperCmd(t, "add", root, "PKGCACHE_SOURCES="+srcs[i])
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if stress {
			waitStaged(t, tmp, before, rng.IntN(100))
			time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond) // a random moment after that is the point
		} else {
			waitStaged(t, tmp, before, 1+rng.IntN(90))
		}
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if err != nil && !strings.Contains(err.Error(), "killed") {
			t.Errorf("add %d: %v\n%s", i, err, out.String())
		}
		if err != nil {
			killed++
			for _, n := range dirNames(t, tmp) {
				if !before[n] {
					midRun++ // it left work in tmp/: it was killed mid-run
					break
				}
			}
		}
		res, verr := c.Verify(context.Background())
		if verr != nil || len(res.Problems) != 0 {
			t.Fatalf("after kill %d: %+v, %v", i, res, verr)
		}
	}
	t.Logf("%d of %d adds killed before they finished, %d of them mid-run", killed, kills, midRun)
	if want := map[bool]int{false: kills, true: kills / 2}[stress]; midRun < want {
		t.Fatalf("%d of %d kills landed mid-run, want at least %d: the test did not test killed adds", midRun, kills, want)
	}
	// The next add, of the last killed source and of a new one, succeeds:
	// the killed processes' download locks died with them.
	for _, src := range []string{srcs[kills-1], srcs[kills]} {
		if _, err := c.Add(context.Background(), src); err != nil {
			t.Fatalf("add after kills: %v", err)
		}
	}
	// Make the dl.* leftovers old enough to be collected.
	c.clock = func() time.Time { return time.Now().Add(2 * time.Minute) }
	res, err := c.Prune(context.Background(), PruneOptions{Outdated: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prune: removed %d outdated ids, %d tmp leftovers", len(res.Removed), res.Leftovers)
	if n := dirNames(t, filepath.Join(root, metaDirName, "tmp")); len(n) != 0 {
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

// waitStaged waits (polling every millisecond, for at most a minute)
// until a staging folder in tmp that is not in old holds at least n
// files; n == 0: until tmp holds anything not in old.
func waitStaged(t *testing.T, tmp string, old map[string]bool, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if n == 0 {
			for _, e := range dirNames(t, tmp) {
				if !old[e] {
					return
				}
			}
		}
		stages, _ := filepath.Glob(filepath.Join(tmp, "*.stage.*"))
		for _, s := range stages {
			if !old[filepath.Base(s)] && len(dirNames(t, s)) >= n {
				return
			}
		}
		time.Sleep(time.Millisecond) // polling a condition, not waiting for time to pass
	}
	t.Fatalf("no staging folder in %s reached %d files within a minute", tmp, n)
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
	if n := dirNames(t, filepath.Join(root, metaDirName, "tmp")); len(n) != 0 {
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
