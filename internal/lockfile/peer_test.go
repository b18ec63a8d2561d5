//go:build unix

package lockfile

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/objgc/objgc/internal/testbin"

	"github.com/objgc/objgc/internal/muranopy"
)

// The tests in this file lock against a Python process that takes its
// locks as Murano's engine does (testdata/peer.py): fcntl.lockf directly,
// through fasteners, and through murano.utils' own lock classes. They need
// /usr/bin/python3 (Debian's, where python3-murano installs); a kind whose
// modules are missing is skipped, except under CI=true.

const python = muranopy.Python

// peer is a running testdata/peer.py.
type peer struct {
	t     *testing.T
	lines *testbin.Lines
}

// startPeer starts the peer of kind on path, or skips the test when
// Python or the kind's modules are missing (outside CI).
func startPeer(t *testing.T, kind, path string) *peer {
	t.Helper()
	imports := map[string]string{
		"lockf":     "import fcntl",
		"fasteners": "import fasteners",
		"murano":    "import murano.common.config, murano.utils",
	}[kind]
	muranopy.Require(t, imports)
	return &peer{t: t, lines: testbin.StartLines(t, exec.Command(python, "testdata/peer.py", kind, path), "peer", time.Minute)}
}

// do sends one command and returns the peer's answer, failing the test
// after a minute without one.
func (p *peer) do(command string) string {
	p.t.Helper()
	return p.lines.Do(command)
}

func (p *peer) must(command, want string) {
	p.t.Helper()
	if got := p.do(command); got != want {
		p.t.Fatalf("peer %s: %q, want %q", command, got, want)
	}
}

var peerKinds = []string{"lockf", "fasteners", "murano"}

// TestPeerLockBlocksObjgc: a lock the engine's way in another process is
// seen by TryLockPath and Held: exclusive keeps out both kinds, shared
// keeps out only exclusive; released, objgc takes it.
func TestPeerLockBlocksObjgc(t *testing.T) {
	for _, kind := range peerKinds {
		t.Run(kind, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "abc_usage.lock")
			p := startPeer(t, kind, path)
			p.must("lock ex", "locked")
			for _, mode := range []Mode{Shared, Exclusive} {
				if u, err := TryLockPath(path, mode); u != nil || err != nil {
					t.Errorf("mode %v under the peer's exclusive lock: taken %v, %v", mode, u != nil, err)
				}
			}
			if !Held(path) {
				t.Error("Held: false under the peer's exclusive lock")
			}
			p.must("unlock", "unlocked")
			p.must("lock sh", "locked")
			u, err := TryLockPath(path, Shared)
			if u == nil || err != nil {
				t.Errorf("shared under the peer's shared lock: %v", err)
			} else {
				u()
			}
			if u, err := TryLockPath(path, Exclusive); u != nil || err != nil {
				t.Errorf("exclusive under the peer's shared lock: taken %v, %v", u != nil, err)
			}
			if !Held(path) {
				t.Error("Held: false under the peer's shared lock")
			}
			p.must("unlock", "unlocked")
			if Held(path) {
				t.Error("Held: true once the peer released")
			}
			u, err = TryLockPath(path, Exclusive)
			if u == nil || err != nil {
				t.Fatalf("exclusive once the peer released: %v", err)
			}
			u()
		})
	}
}

// TestObjgcLockBlocksPeer: the other way round, objgc's locks keep the
// engine's out.
func TestObjgcLockBlocksPeer(t *testing.T) {
	for _, kind := range peerKinds {
		t.Run(kind, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "abc_usage.lock")
			p := startPeer(t, kind, path)
			u, err := TryLockPath(path, Exclusive)
			if u == nil || err != nil {
				t.Fatal(err)
			}
			p.must("try sh", "busy")
			p.must("try ex", "busy")
			u()
			u, err = TryLockPath(path, Shared)
			if u == nil || err != nil {
				t.Fatal(err)
			}
			p.must("try sh", "locked")
			p.must("unlock", "unlocked")
			p.must("try ex", "busy")
			u()
			p.must("try ex", "locked")
			p.must("unlock", "unlocked")
		})
	}
}

// TestLockFileRemovedWhileWaiting: objgc waits for a shared lock on a file
// the engine holds exclusively; the file is removed, then released. The
// lock objgc is then granted on the removed file is worth nothing: nobody
// else will ever test it. Lock must instead lock the file the path names,
// so that the engine, trying the path again, finds it held. (The engine's
// own cleanup, ApiPackageLoader.try_cleanup_cache, releases first and
// removes after; a waiter granted the lock in between passes any check,
// which docs/cache.md describes. Removing first makes the outcome certain.)
func TestLockFileRemovedWhileWaiting(t *testing.T) {
	for _, kind := range []string{"lockf", "fasteners"} {
		t.Run(kind, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "abc_usage.lock")
			engine := startPeer(t, kind, path)
			engine.must("lock ex", "locked")
			old, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			done := lockInBackground(t, path)
			waitOpen(t, old)
			engine.must("remove", "removed")
			engine.must("unlock", "unlocked")
			unlock := <-done
			defer unlock()
			engine.must("try ex", "busy")
		})
	}
}

// TestLockFileReplacedWhileWaiting: as above, but by the time objgc is
// granted the old file's lock, the path names a new file that another
// holder has locked exclusively (created beside it and renamed into place,
// so that the order is certain). Lock must go on waiting for that one.
func TestLockFileReplacedWhileWaiting(t *testing.T) {
	for _, kind := range []string{"lockf", "fasteners"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "abc_usage.lock")
			engine := startPeer(t, kind, path)
			next := startPeer(t, kind, filepath.Join(dir, "new"))
			engine.must("lock ex", "locked")
			old, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			done := lockInBackground(t, path)
			waitOpen(t, old)
			next.must("lock ex", "locked")
			next.must("move "+path, "moved")
			engine.must("unlock", "unlocked")
			select {
			case unlock := <-done:
				unlock()
				t.Fatal("Lock returned while the file the path names is locked exclusively")
			case <-time.After(300 * time.Millisecond):
			}
			next.must("unlock", "unlocked")
			unlock := <-done
			defer unlock()
			engine.must("try ex", "busy")
		})
	}
}

// lockInBackground starts Lock(path, Shared) and delivers its unlock, or
// fails the test on an error.
func lockInBackground(t *testing.T, path string) <-chan func() {
	done := make(chan func(), 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	go func() {
		u, err := Lock(ctx, path, Shared)
		if err != nil {
			t.Error(err)
			u = func() {}
		}
		done <- u
	}()
	return done
}

// waitOpen waits until this process has the file fi open (Lock has opened
// it and is waiting), reading /proc/self/fd.
func waitOpen(t *testing.T, fi os.FileInfo) {
	t.Helper()
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		time.Sleep(200 * time.Millisecond)
		return
	}
	for range 1000 {
		ents, _ := os.ReadDir("/proc/self/fd")
		for _, e := range ents {
			if gi, err := os.Stat(filepath.Join("/proc/self/fd", e.Name())); err == nil && os.SameFile(fi, gi) {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("Lock never opened the lock file")
}

// TestWaitEndsOnSIGINT: Lock waiting for a lock the peer holds ends when
// SIGINT cancels its context, with an error wrapping ErrLocked and
// context.Canceled.
func TestWaitEndsOnSIGINT(t *testing.T) {
	path := filepath.Join(t.TempDir(), "abc_download.lock")
	p := startPeer(t, "lockf", path)
	p.must("lock ex", "locked")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	done := make(chan error, 1)
	go func() {
		u, err := Lock(ctx, path, Exclusive)
		if u != nil {
			u()
		}
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrLocked) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Lock after SIGINT: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Lock still waiting 10s after SIGINT")
	}
}
