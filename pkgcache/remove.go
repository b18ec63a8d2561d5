package pkgcache

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/objgc/objgc/internal/lockfile"
)

// removeOutdatedIDs removes the other ids of fullName/version (a package
// re-uploaded, or the engine's copy of what objgc added) as the engine's
// cleanup does after each download (ApiPackageLoader.try_cleanup_cache):
// each only if its usage lock can be taken exclusively without waiting
// and no process holds an orphaned lock of it (see claimEntry).
func (c *Cache) removeOutdatedIDs(fullName, version, keep string) (removed, kept []string) {
	names, err := c.readDirNames(filepath.Join(c.fullNameDir(fullName), version))
	if err != nil {
		return nil, nil
	}
	var ids []string
	for _, id := range names {
		if id != keep && idRE.MatchString(id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	g := c.newUseGuard(ids)
	for _, id := range ids {
		ok, err := c.removeEntry(g, fullName, version, id)
		switch {
		case err != nil:
			kept = append(kept, id)
		case ok:
			removed = append(removed, id)
		default:
			kept = append(kept, id)
		}
	}
	sort.Strings(removed)
	sort.Strings(kept)
	return removed, kept
}

// removeEntry removes <fullName>/<version>/<id> if nobody uses it (see
// claimEntry) and deletes it. false, nil: in use, or already gone.
func (c *Cache) removeEntry(g *useGuard, fullName, version, id string) (bool, error) {
	cl, err := c.claimEntry(g, fullName, version, id, "")
	if err != nil || !cl.ok {
		return false, err
	}
	if err := c.removeAll(cl.trash); err != nil {
		return true, fmt.Errorf("removing %s: %w", cl.trash, err)
	}
	return true, nil
}

// testHookClaimed, when a test sets it, runs in claimEntry while the
// exclusive usage lock of id is held, before the package is moved away.
var testHookClaimed func(id string)

// claim is what claimEntry did with one package.
type claim struct {
	trash string // the trash directory to delete, when ok
	ok    bool   // claimed: moved out of the engine's sight
	// busy says why the package stays although its usage lock was free
	// (an orphaned lock, or a missing lock file that cannot be checked);
	// "" when its usage lock was held, or the package is gone.
	busy string
}

// claimEntry takes the usage lock of id exclusively without waiting and,
// holding it, checks with g that no process holds an orphaned lock of it,
// renames the package directory into .objgc/trash/ (one rename: the
// engine, which loads <FullName>/<version>/<id>, never sees a
// half-deleted package) and removes objgc's record and marker of the id;
// then it releases the lock. It returns the trash directory for the
// caller to delete. ok is false when the package is in use or already
// gone.
//
// The lock files stay: the engine locks whatever file it opened without
// checking that the path still names it, and its shared lock creates the
// file and then opens it again (murano.utils.SharedInterProcessLock
// _do_open): a lock file deleted under a deployment that is starting
// leaves it holding a lock nobody sees, or fails it. They are empty
// files, as the engine leaves them for every package it keeps. When the
// process table cannot be read (g's scan is not complete), a package
// whose usage lock file is missing is kept: a deployment may hold a lock
// on the deleted file, and objgc would not see it.
//
// installedBy is the package's Entry.InstalledBy when the caller read it
// (its record need not be read again), "" when it did not.
func (c *Cache) claimEntry(g *useGuard, fullName, version, id, installedBy string) (claim, error) {
	dir := c.entryDir(fullName, version, id)
	unlock, fi, err := c.tryLockInfo(c.usageLockPath(id), lockfile.Exclusive, g.scan.complete)
	if err != nil {
		if !g.scan.complete && errors.Is(err, fs.ErrNotExist) {
			if !c.isDir(dir) {
				return claim{}, nil
			}
			return claim{busy: g.scan.missingWhy()}, nil
		}
		return claim{}, err
	}
	if unlock == nil {
		c.recordUse(&Entry{ID: id, Dir: dir})
		return claim{}, nil
	}
	defer unlock()
	if why := g.check(id, fi); why != "" {
		if !c.isDir(dir) {
			return claim{}, nil
		}
		c.recordUse(&Entry{ID: id, Dir: dir})
		return claim{busy: why}, nil
	}
	if testHookClaimed != nil {
		testHookClaimed(id)
	}
	trash, err := c.trashName()
	if err != nil {
		return claim{}, fmt.Errorf("removing %s: %w", dir, err)
	}
	if st, err := c.lstat(dir); err == nil && !st.IsDir() {
		// A link (or anything else) where the package was: not a
		// package, never renamed nor deleted through (List reports it).
		return claim{}, nil
	}
	if err := c.rename(dir, trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return claim{}, nil // someone removed it before us
		}
		return claim{}, fmt.Errorf("removing %s: %w", dir, err)
	}
	c.forget(fullName, version, id, installedBy)
	return claim{trash: trash, ok: true}, nil
}

// forget removes objgc's record of id (when it is the record of this
// package: installedBy says, or the record is read to find out) and its
// last-use marker.
func (c *Cache) forget(fullName, version, id, installedBy string) {
	switch installedBy {
	case installedByObjgc:
		c.remove(c.recordPath(id))
	case "":
		if rec, err := c.readRecordHeader(id); err == nil && rec.matches(fullName, version, id) {
			c.remove(c.recordPath(id))
		}
	}
	c.remove(c.lastUsePath(id))
}

// trashName returns a fresh name in .objgc/trash/ for a package
// directory to be renamed to before it is deleted: out of the engine's
// sight (it never looks in .objgc/), on the same file system, so the
// rename is one step. A prune removes those left by killed processes.
func (c *Cache) trashName() (string, error) {
	if c.h != nil && c.h.trash != nil {
		return filepath.Join(c.trashDir(), randomSuffix()), nil
	}
	if err := c.mkdirAll(c.trashDir()); err != nil {
		return "", err
	}
	return filepath.Join(c.trashDir(), randomSuffix()), nil
}
