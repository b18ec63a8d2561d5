package destroy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/objgc/objgc/internal/lockfile"
	"github.com/objgc/objgc/internal/testbin"
)

// helperEnv makes the test binary a helper process instead of running the
// tests: "<mode>:<arg>". Concurrency is tested with real processes and
// real flock(2), as cmd/go's lockedfile tests do.
const helperEnv = "OBJGC_DESTROY_TEST_HELPER"

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		mode, arg, _ := strings.Cut(h, ":")
		switch mode {
		case "lock-hold":
			os.Exit(lockHoldHelper(arg))
		}
		fmt.Fprintf(os.Stderr, "unknown %s mode %q\n", helperEnv, mode)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// lockHoldHelper takes the lock of target, says "locked" on stdout and
// holds it until stdin is closed.
func lockHoldHelper(target string) int {
	unlock, err := lockTarget(context.Background(), target, 0, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	unlock()
	return 0
}

func lockHeld(t *testing.T) (target string, h *testbin.Self) {
	t.Helper()
	target = filepath.Join(t.TempDir(), "model.json")
	h = testbin.StartSelf(t, helperEnv, "lock-hold", target)
	h.Expect(t, "locked")
	return target, h
}

func TestLockTargetFailsAtOnceWhenHeld(t *testing.T) {
	target, h := lockHeld(t)
	unlock, err := lockTarget(context.Background(), target, 0, nil)
	if err == nil {
		unlock()
		t.Fatal("second lockTarget took the lock")
	}
	// It did not wait: LockedError.Waited (checked below) is 0.
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("error %v does not wrap ErrLocked", err)
	}
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("error %T is not a *LockedError", err)
	}
	if le.Path != target+".lock" || le.Waited != 0 {
		t.Errorf("LockedError %+v", le)
	}
	pid := "pid " + strconv.Itoa(h.Cmd.Process.Pid)
	host, _ := os.Hostname()
	if !strings.HasPrefix(le.Holder, pid+" on host "+host+" since ") || !strings.Contains(err.Error(), pid) {
		t.Errorf("holder %q, error %q: want %s on host %s", le.Holder, err, pid, host)
	}
	if !strings.Contains(le.Holder, "-test.run") {
		t.Errorf("holder %q lacks the command line", le.Holder)
	}
}

func TestLockTargetWaitsForHolderToExit(t *testing.T) {
	target, h := lockHeld(t)
	type result struct {
		unlock func()
		err    error
	}
	done := make(chan result, 1)
	go func() {
		unlock, err := lockTarget(context.Background(), target, 10*time.Second, nil)
		done <- result{unlock, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("lockTarget returned while the lock was held: %v", r.err)
	case <-time.After(300 * time.Millisecond):
	}
	h.Stdin.Close()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if err := h.Cmd.Wait(); err != nil {
		t.Errorf("helper: %v", err)
	}
	b, err := os.ReadFile(target + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`{"pid":%d,`, os.Getpid()); !strings.HasPrefix(string(b), want) {
		t.Errorf("lock file holds %q, want our record %s...", b, want)
	}
	r.unlock()
	r.unlock() // twice is fine
	if _, err := os.Stat(target + ".lock"); err != nil {
		t.Errorf("lock file gone after unlock: %v", err)
	}
}

func TestLockTargetReleasedWhenHolderIsKilled(t *testing.T) {
	target, h := lockHeld(t)
	if err := h.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.Cmd.Wait()
	unlock, err := lockTarget(context.Background(), target, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if _, err := os.Stat(target + ".lock"); err != nil {
		t.Errorf("lock file gone: %v", err)
	}
	// And it can be taken again at once.
	unlock, err = lockTarget(context.Background(), target, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}

func TestLockTargetTimeoutExpires(t *testing.T) {
	target, h := lockHeld(t)
	_, err := lockTarget(context.Background(), target, 200*time.Millisecond, nil)
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
		t.Fatalf("got %v, want a *LockedError", err)
	}
	if le.Waited < 200*time.Millisecond || !strings.Contains(le.Holder, strconv.Itoa(h.Cmd.Process.Pid)) {
		t.Errorf("LockedError %+v", le)
	}
	if !strings.Contains(err.Error(), "(waited ") {
		t.Errorf("error %q does not say it waited", err)
	}
}

func TestLockTargetContextEnds(t *testing.T) {
	target, _ := lockHeld(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := lockTarget(ctx, target, -1, nil)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrLocked) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// flock(2) locks belong to open file descriptions, so a second lockTarget
// in the same process conflicts too.
func TestLockTargetInProcess(t *testing.T) {
	target := filepath.Join(t.TempDir(), "m.json")
	unlock, err := lockTarget(context.Background(), target, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockTarget(context.Background(), target, 0, nil)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d ", os.Getpid())) {
		t.Fatalf("second lock: %v", err)
	}
	unlock()
	b, err := os.ReadFile(target + ".lock")
	if err != nil || len(b) != 0 {
		t.Errorf("after unlock the lock file holds %q (%v), want it empty", b, err)
	}
	unlock, err = lockTarget(context.Background(), target, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}

func TestDescribeHolder(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "another process (it has not recorded itself yet)"},
		{`{"pid":7,"host":"h","started":"2026-01-02T03:04:05Z","command":["objgc","apply","m.json"]}` + "\n",
			"pid 7 on host h since 2026-01-02T03:04:05Z (objgc apply m.json)"},
		// Our record first, the tail of a longer previous one after it.
		{`{"pid":7}` + "\n" + `"]}` + "\n", "pid 7"},
		{"garbage", `another process (unreadable holder record "garbage")`},
	} {
		if got := describeHolder([]byte(tc.in)); got != tc.want {
			t.Errorf("describeHolder(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// within runs f in a goroutine and fails the test if it has not returned
// within d (the test's own bound on a call that must not block; it is not
// a measurement).
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s still blocked after %s", what, d)
	}
}

// TestLockTargetSymlink: a symbolic link at <target>.lock is not followed:
// the file it points to keeps its content and mode, and the error names
// the lock path.
func TestLockTargetSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "model.json")
	victim := filepath.Join(dir, "precious.txt")
	content := []byte("do not touch\nsecond line\n")
	if err := os.WriteFile(victim, content, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, target+".lock"); err != nil {
		t.Fatal(err)
	}
	for _, timeout := range []time.Duration{0, time.Second} {
		unlock, err := lockTarget(context.Background(), target, timeout, nil)
		if err == nil {
			unlock()
			t.Fatal("lockTarget took a lock through a symbolic link")
		}
		if !errors.Is(err, lockfile.ErrNotRegular) || errors.Is(err, ErrLocked) ||
			!strings.Contains(err.Error(), "lock file "+target+".lock is a symbolic link to "+victim) {
			t.Errorf("timeout %s: error %q, want lockfile.ErrNotRegular naming %s.lock and the link", timeout, err, target)
		}
	}
	got, err := os.ReadFile(victim)
	if err != nil || !bytes.Equal(got, content) {
		t.Errorf("the link's target now holds %q (%v), want %q", got, err, content)
	}
	if fi, err := os.Lstat(target + ".lock"); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	// A dangling link is refused too, and nothing is created behind it.
	gone := filepath.Join(dir, "created-through-link")
	target2 := filepath.Join(dir, "other.json")
	if err := os.Symlink(gone, target2+".lock"); err != nil {
		t.Fatal(err)
	}
	if _, err := lockTarget(context.Background(), target2, 0, nil); !errors.Is(err, lockfile.ErrNotRegular) {
		t.Errorf("dangling link: %v, want lockfile.ErrNotRegular", err)
	}
	if _, err := os.Lstat(gone); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was created through the dangling link: %v", err)
	}
}

// TestLockTargetNotRegular: a FIFO, a directory or a socket at
// <target>.lock is an error at once, whatever the timeout, never a wait
// for a peer that will not come.
func TestLockTargetNotRegular(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, want string
		make       func(path string) error
	}{
		{"fifo", "a named pipe (FIFO)", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"dir", "a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		target := filepath.Join(dir, tc.name+".json")
		if err := tc.make(target + ".lock"); err != nil {
			t.Fatal(err)
		}
		for _, timeout := range []time.Duration{0, -1} {
			var err error
			within(t, 10*time.Second, "lockTarget on a "+tc.name, func() {
				var unlock func()
				unlock, err = lockTarget(context.Background(), target, timeout, nil)
				if err == nil {
					unlock()
				}
			})
			if !errors.Is(err, lockfile.ErrNotRegular) || !strings.Contains(err.Error(), "lock file "+target+".lock is "+tc.want) {
				t.Errorf("%s, timeout %s: %v, want lockfile.ErrNotRegular naming the path and %q", tc.name, timeout, err, tc.want)
			}
		}
	}
}

// TestLockTargetWaitEndsWithContext: a lock held by another process, a
// positive --lock-timeout, and the context cancelled before it ends (a
// signal): lockTarget returns the context's error, not ErrLocked.
func TestLockTargetWaitEndsWithContext(t *testing.T) {
	target, h := lockHeld(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct{ err error }
	done := make(chan result, 1)
	go func() {
		_, err := lockTarget(ctx, target, time.Hour, nil)
		done <- result{err}
	}()
	select {
	case r := <-done:
		t.Fatalf("lockTarget returned while the lock was held and the context alive: %v", r.err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	var r result
	within(t, 10*time.Second, "lockTarget after cancel", func() { r = <-done })
	if !errors.Is(r.err, context.Canceled) || errors.Is(r.err, ErrLocked) || !strings.Contains(r.err.Error(), target+".lock") {
		t.Fatalf("got %v, want context.Canceled naming the lock file", r.err)
	}
	// A context already ended: no wait, no lock file touched.
	_, err := lockTarget(ctx, target, 0, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ended context: %v", err)
	}
	// The holder is still the helper, its record intact.
	b, _ := os.ReadFile(target + ".lock")
	if want := fmt.Sprintf(`{"pid":%d,`, h.Cmd.Process.Pid); !strings.HasPrefix(string(b), want) {
		t.Errorf("lock file holds %q, want the helper's record", b)
	}
}

// TestLockTargetIsFlock: apply's lock is a flock(2), taken with
// gofrs/flock: another holder's flock (here through gofrs/flock on
// another open file description, as another objgc apply or flock(1)
// holds it) keeps lockTarget out, while a POSIX record lock on the same
// file, the package cache's kind, does not (on Linux and the BSDs the two
// kinds never see each other).
func TestLockTargetIsFlock(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("on Windows the target lock is internal/lockfile's LockFileEx")
	}
	target := filepath.Join(t.TempDir(), "m.json")
	fl := flock.New(LockPath(target), flock.SetFlag(os.O_RDWR|os.O_CREATE), flock.SetPermissions(0o644))
	if ok, err := fl.TryLock(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, err := lockTarget(context.Background(), target, 0, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("under another flock: %v, want ErrLocked", err)
	}
	fl.Unlock()
	if runtime.GOOS != "linux" && !strings.HasSuffix(runtime.GOOS, "bsd") {
		return
	}
	unlockRecord, err := lockfile.TryLockPath(LockPath(target), lockfile.Exclusive)
	if unlockRecord == nil || err != nil {
		t.Fatal(err)
	}
	defer unlockRecord()
	unlock, err := lockTarget(context.Background(), target, 0, nil)
	if err != nil {
		t.Fatalf("under a record lock: %v, want the flock taken", err)
	}
	unlock()
}
