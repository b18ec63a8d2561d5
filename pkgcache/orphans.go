package pkgcache

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/objgc/objgc/internal/lockfile"
)

// Orphaned usage locks.
//
// Murano's engine locks whatever file it opened and never checks that
// the path still names it (murano.utils.SharedInterProcessLock, used by
// ApiPackageLoader._lock_usage), and its cleanup
// (ApiPackageLoader.try_cleanup_cache) deletes <id>_usage.lock after
// releasing it. A deployment that opened the file before that deletion
// and is granted its lock afterwards holds a lock on a file no path names
// any more: the package is in use, but taking its usage lock at the path
// shows nothing. objgc never deletes a lock file, so only the engine makes
// such orphans; objgc finds them in the process table: on Linux a process's
// open file that was deleted reads "PATH (deleted)" under /proc/PID/fd,
// which the engine's user and root may read.

// orphanScan is what one reading of the process table found.
type orphanScan struct {
	// complete: every process that may hold the engine's locks (those of
	// the cache's owner) was read. When false, why says what could not be
	// read, and a package whose usage lock file is missing is kept.
	complete bool
	why      string
	// held maps an id to the processes that have its deleted usage lock
	// file open; downloading, its deleted download lock file.
	held        map[string][]int
	downloading map[string][]int
}

// busy is why id is in use according to s, "" when s found nothing.
func (s orphanScan) busy(id string) string {
	pids := s.held[id]
	if len(pids) == 0 {
		return ""
	}
	return fmt.Sprintf("process %d has its deleted usage lock file open (a deployment that got its lock after murano-engine's cleanup deleted the file)", pids[0])
}

// missingWhy is why a package whose usage lock file is missing is kept
// when the process table could not be read.
func (s orphanScan) missingWhy() string {
	return "its usage lock file is missing, and a deployment may hold a lock on the deleted file: " + s.why
}

// Note is how prune and rm report the check (docs/cache.md, "Orphaned
// locks").
func (s orphanScan) note() string {
	if s.complete {
		return "checked in /proc: a process holding a deleted usage lock file counts as a use"
	}
	return "not checked (" + s.why + "): packages whose usage lock file is missing are kept"
}

// scanOrphans reads the process table once for orphaned usage locks of
// this cache. The owner is the cache root's (the engine's user).
func (c *Cache) scanOrphans() orphanScan {
	uid := os.Geteuid()
	if o, ok := c.rootOwner(); ok {
		uid = o.uid
	}
	s := readProcOrphans(c.root, uid)
	for _, pids := range s.held {
		sort.Ints(pids)
	}
	return s
}

// useGuard decides, for the removals of one command, whether a package
// whose usage lock the command holds exclusively is still in use through
// an orphaned lock. It reads the process table once when made; a claim
// whose lock file is not the one the guard saw before that reading asks
// for a reading that starts after its lock was taken (see check).
type useGuard struct {
	c      *Cache
	scan   orphanScan
	before map[string]fs.FileInfo // id -> its usage lock file, lstat'ed before scan
	fresh  rescans
}

// newUseGuard reads the usage lock files of ids, then the process table.
func (c *Cache) newUseGuard(ids []string) *useGuard {
	g := &useGuard{c: c, before: make(map[string]fs.FileInfo, len(ids))}
	if procAvailable() {
		for _, id := range ids {
			if fi, err := c.lstat(c.usageLockPath(id)); err == nil {
				g.before[id] = fi
			}
		}
	}
	g.scan = c.scanOrphans()
	return g
}

// check returns why id is in use although this process holds the
// exclusive lock of locked, the file its usage lock path names now; ""
// when it is free.
//
// Any process holding an orphaned lock of id opened the deleted file
// before it was deleted, so before locked was created, so before the
// lock was taken: a reading of /proc/PID/fd that starts after the lock
// sees it (a process that closed the file holds no lock). The guard's
// first reading serves when locked is the very file lstat'ed before it
// (same inode and change time); otherwise a new reading is made, shared
// by the claims waiting for one.
func (g *useGuard) check(id string, locked fs.FileInfo) string {
	if !g.scan.complete {
		return ""
	}
	if fi, ok := g.before[id]; ok && sameLockFile(fi, locked) {
		return g.scan.busy(id)
	}
	s := g.fresh.after(g.c.scanOrphans)
	if !s.complete {
		return "its usage lock file was replaced, and " + s.why
	}
	return s.busy(id)
}

// rescans coalesces readings of the process table: after returns a
// reading that started after it was called, shared with every caller
// that asked before that reading started.
type rescans struct {
	mu      sync.Mutex
	pending *rescan
	running bool
}

type rescan struct {
	done chan struct{}
	res  orphanScan
}

func (r *rescans) after(scan func() orphanScan) orphanScan {
	r.mu.Lock()
	if r.pending == nil {
		r.pending = &rescan{done: make(chan struct{})}
	}
	p := r.pending
	if !r.running {
		r.running = true
		go func() {
			for {
				r.mu.Lock()
				next := r.pending
				r.pending = nil
				if next == nil {
					r.running = false
					r.mu.Unlock()
					return
				}
				r.mu.Unlock()
				next.res = scan()
				close(next.done)
			}
		}()
	}
	r.mu.Unlock()
	<-p.done
	return p.res
}

// tryLockInfo is tryLockAt that also returns the file locked; with
// create false a missing lock file is an error wrapping fs.ErrNotExist.
func (c *Cache) tryLockInfo(path string, mode lockfile.Mode, create bool) (unlock func(), fi fs.FileInfo, err error) {
	if c.rootDir != nil && filepath.Dir(path) == c.root {
		// A lock file at the root, beneath the root's handle (lockFile).
		unlock, fi, err = lockfile.TryLockAtInfo(c.rootDir, filepath.Base(path), path, mode, create)
	} else {
		unlock, fi, err = lockfile.TryLockPathInfo(path, mode, create)
	}
	if err != nil || unlock == nil {
		return unlock, fi, err
	}
	if err := c.chown(path); err != nil {
		unlock()
		return nil, nil, fmt.Errorf("lock file %s: %w", path, err)
	}
	return unlock, fi, nil
}

// deletedLockName returns the id and suffix (usageSuffix or
// downloadSuffix) of a /proc/PID/fd link target under prefix (the cache
// root and a slash) naming a deleted lock file.
func deletedLockName(target, prefix string) (id, suffix string, ok bool) {
	rest, ok := strings.CutPrefix(target, prefix)
	if !ok {
		return "", "", false
	}
	rest, ok = strings.CutSuffix(rest, " (deleted)")
	if !ok || strings.Contains(rest, "/") {
		return "", "", false
	}
	for _, suffix := range []string{usageSuffix, downloadSuffix} {
		if id, ok := lockID(rest, suffix); ok {
			return id, suffix, true
		}
	}
	return "", "", false
}
