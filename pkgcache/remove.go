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
// each only if its usage lock can be taken exclusively without waiting.
func (c *Cache) removeOutdatedIDs(fullName, version, keep string) (removed, kept []string) {
	names, err := c.readDirNames(filepath.Join(c.fullNameDir(fullName), version))
	if err != nil {
		return nil, nil
	}
	for _, id := range names {
		if id == keep || !idRE.MatchString(id) {
			continue
		}
		ok, err := c.removeEntry(fullName, version, id)
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
func (c *Cache) removeEntry(fullName, version, id string) (bool, error) {
	trash, ok, err := c.claimEntry(fullName, version, id, "")
	if err != nil || !ok {
		return false, err
	}
	if err := c.removeAll(trash); err != nil {
		return true, fmt.Errorf("removing %s: %w", trash, err)
	}
	return true, nil
}

// claimEntry takes the usage lock of id exclusively without waiting and,
// holding it, renames the package directory into .objgc/trash/ (one
// rename: the engine, which loads <FullName>/<version>/<id>, never sees a
// half-deleted package), removes objgc's record and marker of the id and
// deletes both lock files, as the engine does after its cleanup; then it
// releases the lock. It returns the trash directory for the caller to
// delete. ok is false when the package is in use or already gone.
//
// The lock files are deleted while the lock is held, not after (the
// engine's order): a process waiting on the lock then finds, once it has
// it, that the path names another file or none, and locks again (lockAt);
// deleted after the release, a waiter could take the lock and check the
// path just before the deletion, and hold a lock nobody else sees.
//
// installedBy is the package's Entry.InstalledBy when the caller read it
// (its record need not be read again), "" when it did not.
func (c *Cache) claimEntry(fullName, version, id, installedBy string) (trash string, ok bool, err error) {
	unlock, err := c.tryLockAt(c.usageLockPath(id), lockfile.Exclusive)
	if err != nil {
		return "", false, err
	}
	if unlock == nil {
		return "", false, nil
	}
	defer unlock()
	dir := c.entryDir(fullName, version, id)
	trash, err = c.trashName()
	if err != nil {
		return "", false, fmt.Errorf("removing %s: %w", dir, err)
	}
	if st, err := c.lstat(dir); err == nil && !st.IsDir() {
		// A link (or anything else) where the package was: not a
		// package, never renamed nor deleted through (List reports it).
		return "", false, nil
	}
	if err := c.rename(dir, trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, nil // someone removed it before us
		}
		return "", false, fmt.Errorf("removing %s: %w", dir, err)
	}
	c.forget(fullName, version, id, installedBy)
	c.remove(c.downloadLockPath(id))
	c.remove(c.usageLockPath(id))
	return trash, true, nil
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
