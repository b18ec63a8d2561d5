package pkgcache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"

	"github.com/objgc/objgc/internal/lockfile"
)

// MigrateResult is what Migrate did.
type MigrateResult struct {
	// Moved are the packages moved from an earlier objgc layout to
	// <FullName>/<version>/<id>/ (Dir is the new directory).
	Moved []Entry `json:"moved"`
	// Duplicates are copies in an earlier layout of packages that were
	// in the engine's layout too: the old copy is deleted, the other kept.
	Duplicates []Entry `json:"duplicates"`
	// InUse are the packages whose usage lock is held (a plan or apply of
	// an earlier objgc reads them): they are not moved, and the cache
	// stays in the earlier layout until Migrate runs again.
	InUse []Entry `json:"in_use"`
	// Left are names in packages/ that are not packages (nor trash):
	// Migrate does not guess what they are; they keep the cache in the
	// earlier layout until they are moved or removed by hand.
	Left []Problem `json:"left"`
	// Leftovers counts the trash directories of removals killed under an
	// earlier layout that Migrate deleted.
	Leftovers int `json:"trash_leftovers"`
}

// Done reports whether the cache is now wholly in the engine's layout (as
// far as Migrate saw): nothing was in use and nothing was left.
func (r MigrateResult) Done() bool { return len(r.InUse) == 0 && len(r.Left) == 0 }

// oldTrashPrefix starts the name of a package directory being deleted in
// both earlier layouts.
const oldTrashPrefix = ".trash."

// oldDigestsFile is where both earlier layouts kept a package's digests
// record: inside the package directory.
const oldDigestsFile = ".objgc-digests.json"

// OpenForMigrate returns the cache at root for Migrate: like
// OpenExisting, but a cache in an earlier objgc layout is what it is for.
func OpenForMigrate(root string) (*Cache, error) {
	c, err := openAt(root)
	if err != nil {
		return nil, err
	}
	if !c.isCache() {
		return nil, fmt.Errorf("%w at %s (neither objgc's %s/ nor murano-engine's <FullName>/<version>/<id>/ packages or <id>_usage.lock files; objgc cache add creates one)", ErrNoCache, c.root, metaDirName)
	}
	return c, nil
}

// Migrate moves every package of both earlier objgc layouts,
// packages/<FullName>/<version>@<id>/ and the older
// packages/<FullName>/<version>/<id>/ (with locks/ beside, flock(2)
// locks), to the engine's layout, <FullName>/<version>/<id>/: the digests
// record inside the package goes to .objgc/records/<id>.json and the
// last-use marker to .objgc/lastuse/<id>. When nothing is left behind,
// packages/, locks/ and tmp/ are removed. A cache already in the engine's
// layout is left as it is, so Migrate can run again after it was
// interrupted or after packages were in use.
//
// It runs under .objgc/prune.lock and the earlier layout's
// locks/prune.lock (exclusive, without waiting: the error is
// ErrPruneRunning while a prune or another migration runs, of this objgc
// or of an earlier one), and moves each package holding its earlier usage
// and download locks (flock) and its usage lock of the engine's layout,
// all exclusive and without waiting: a package in use is left where it is
// and reported in InUse. A package is moved by one rename, so it is whole
// in one place or the other, also when the process is killed. When ctx
// ends, Migrate moves no further package and returns ctx's error with
// what it did.
func (c *Cache) Migrate(ctx context.Context) (MigrateResult, error) {
	res := MigrateResult{}
	if c.ownerErr != nil {
		return res, c.ownerErr
	}
	if !c.oldLayout() {
		return res, nil
	}
	// The earlier layout's lock first: it exists already, and a refusal
	// then creates nothing.
	unlockOld, err := c.oldLock("prune.lock")
	if err != nil {
		return res, fmt.Errorf("migrating: %w", err)
	}
	if unlockOld == nil {
		return res, ErrPruneRunning
	}
	defer unlockOld()
	unlock, err := c.lockPrune("migrating")
	if err != nil {
		return res, err
	}
	defer unlock()
	type oldEntry struct{ dir, fn, v, id string }
	var found []oldEntry
	c.oldPackages(c.oldLockIDs(), func(dir, fn, v, id string) bool {
		found = append(found, oldEntry{dir, fn, v, id})
		return true
	})
	for _, o := range found {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := c.migrateEntry(&res, o.dir, o.fn, o.v, o.id); err != nil {
			return res, err
		}
	}
	// packages/ named as a FullName of the engine's layout is a tenant's
	// package: nothing of it is trash, nor left over.
	pkgs := filepath.Join(c.root, "packages")
	if !c.enginePackageDir(pkgs) {
		c.sweepOld(&res, pkgs)
	}
	if res.Done() {
		c.removeOldLayout()
	}
	return res, nil
}

// sweepOld deletes the trash of removals killed under an earlier layout
// (packages/<FullName>/.trash.*, packages/<FullName>/<version>/.trash.*)
// and reports in res.Left what is neither that nor a package still there
// (one in use), then removes the directories left empty.
func (c *Cache) sweepOld(res *MigrateResult, pkgs string) {
	// Packages still there (in use, or whose record was not believed)
	// were reported already.
	inUse := map[string]bool{}
	for _, e := range res.InUse {
		inUse[e.Dir] = true
	}
	for _, l := range res.Left {
		if l.ID != "" {
			inUse[filepath.Dir(l.Path)] = true
		}
	}
	fns, err := c.readDir(pkgs)
	if err != nil {
		return
	}
	left := func(p string) {
		res.Left = append(res.Left, Problem{Path: p, Problem: "not a package of an earlier objgc layout: move or remove it by hand, then migrate again"})
	}
	for _, f := range fns {
		fdir := filepath.Join(pkgs, f.name)
		if !f.isDir() {
			left(fdir)
			continue
		}
		names, err := c.readDir(fdir)
		if err != nil {
			left(fdir)
			continue
		}
		for _, n := range names {
			p := filepath.Join(fdir, n.name)
			switch {
			case inUse[p]:
			case strings.HasPrefix(n.name, oldTrashPrefix) && !n.isLink():
				if c.removeAll(p) == nil {
					res.Leftovers++
				}
			case n.isDir() && safeComponent(n.name, versionRE) && !strings.Contains(n.name, "@"):
				inner, err := c.readDir(p)
				if err != nil || !onlyOldIDs(inner) {
					left(p)
					continue
				}
				for _, e := range inner {
					q := filepath.Join(p, e.name)
					switch {
					case inUse[q]:
					case strings.HasPrefix(e.name, oldTrashPrefix):
						if c.removeAll(q) == nil {
							res.Leftovers++
						}
					default:
						left(q)
					}
				}
				c.remove(p) // only when empty
			default:
				left(p)
			}
		}
		c.remove(fdir) // only when empty
	}
}

// enginePackageDir reports whether dir is a <FullName>/ directory of the
// engine's layout: some <version>/<id>/manifest.yaml under it is a
// regular file.
func (c *Cache) enginePackageDir(dir string) bool {
	vs, err := c.readDir(dir)
	if err != nil {
		return false
	}
	for _, v := range vs {
		if !v.isDir() || !safeComponent(v.name, versionRE) {
			continue
		}
		ids, err := c.readDir(filepath.Join(dir, v.name))
		if err != nil {
			continue
		}
		for _, id := range ids {
			if !id.isDir() || !idRE.MatchString(id.name) {
				continue
			}
			if st, err := c.lstat(filepath.Join(dir, v.name, id.name, "manifest.yaml")); err == nil && st.Mode().IsRegular() {
				return true
			}
		}
	}
	return false
}

// migrateEntry moves the package at from to <fn>/<v>/<id>/ holding its
// locks of both layouts.
func (c *Cache) migrateEntry(res *MigrateResult, from, fn, v, id string) error {
	to := c.entryDir(fn, v, id)
	e := Entry{FullName: fn, Version: v, ID: id, Dir: to, InstalledBy: installedByObjgc}
	oldRec, recErr := c.readOldRecord(from)
	if recErr == nil && (oldRec.ID != id || oldRec.FullName != fn || oldRec.Version != v) {
		// A record is believed only about its own place.
		res.Left = append(res.Left, Problem{FullName: fn, Version: v, ID: id, Path: filepath.Join(from, oldDigestsFile),
			Problem: fmt.Sprintf("digests record describes %s %s (%s), not the package it is in: not migrated; move or remove it by hand, then migrate again", oldRec.FullName, oldRec.Version, oldRec.ID)})
		return nil
	}
	if recErr == nil {
		e.Size, e.Installed = oldRec.Size, oldRec.Installed
	}
	inUse := func() error {
		e.Dir, e.InUse = from, true
		res.InUse = append(res.InUse, e)
		return nil
	}
	for _, name := range []string{id + ".usage", id + ".download"} {
		unlock, err := c.oldLock(name)
		if err != nil {
			return fmt.Errorf("migrating %s: %w", from, err)
		}
		if unlock == nil {
			return inUse()
		}
		defer unlock()
	}
	unlock, err := c.tryLockAt(c.usageLockPath(id), lockfile.Exclusive)
	if err != nil {
		return fmt.Errorf("migrating %s: %w", from, err)
	}
	if unlock == nil {
		return inUse()
	}
	defer unlock()
	if c.isDir(to) || c.isLink(to) {
		// The same id is in the engine's layout already: the old copy
		// goes the way of any removal, renamed aside and deleted.
		trash, err := c.trashName()
		if err == nil {
			err = c.rename(from, trash)
		}
		if err != nil {
			return fmt.Errorf("migrating %s: %w", from, err)
		}
		c.removeAll(trash)
		res.Duplicates = append(res.Duplicates, e)
		c.removeOldLocks(id)
		return nil
	}
	// The record first, then the package without it: killed in between,
	// the next Migrate finds the package without its inner record and
	// the record already in place.
	if recErr == nil {
		if err := c.writeRecord(oldRec); err != nil {
			return fmt.Errorf("migrating %s: %w", from, err)
		}
		if err := c.remove(filepath.Join(from, oldDigestsFile)); err != nil {
			return fmt.Errorf("migrating %s: %w", from, err)
		}
	} else if !errors.Is(recErr, fs.ErrNotExist) {
		return fmt.Errorf("migrating %s: its digests record %s: %w", from, oldDigestsFile, recErr)
	}
	if err := c.mkdirAll(filepath.Dir(to)); err != nil {
		return fmt.Errorf("migrating %s: %w", from, err)
	}
	// The package belongs to the cache's owner (root migrating a user's
	// cache): the engine's cleanup ignores rmtree errors, so a package it
	// could not delete would stay for ever.
	if err := c.chownTree(from); err != nil {
		return fmt.Errorf("migrating %s: %w", from, err)
	}
	if err := c.rename(from, to); err != nil {
		return fmt.Errorf("migrating %s: %w", from, err)
	}
	if m := filepath.Join(c.root, "locks", id+".lastuse"); !c.isLink(m) {
		if err := c.mkdirAll(c.lastUseDir()); err == nil {
			if c.rename(m, c.lastUsePath(id)) == nil {
				c.chown(c.lastUsePath(id))
			}
		}
	}
	c.removeOldLocks(id)
	res.Moved = append(res.Moved, e)
	return nil
}

// readOldRecord reads the digests record inside a package directory of
// an earlier layout.
func (c *Cache) readOldRecord(dir string) (*digestRecord, error) {
	data, err := c.readFile(filepath.Join(dir, oldDigestsFile), 64<<20)
	if err != nil {
		return nil, err
	}
	var rec digestRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// oldLock takes the earlier layout's flock(2) lock locks/<name>
// exclusively without waiting: nil, nil when another holds it. Only the
// earlier objgc took these; gofrs/flock opens the file without following a
// link and without waiting on a FIFO (oldLockFlag).
func (c *Cache) oldLock(name string) (unlock func(), err error) {
	l := flock.New(filepath.Join(c.root, "locks", name), flock.SetFlag(oldLockFlag), flock.SetPermissions(0o644))
	ok, err := l.TryLock()
	if err != nil {
		l.Close()
		return nil, err
	}
	if !ok {
		l.Close()
		return nil, nil
	}
	return func() { l.Close() }, nil
}

// removeOldLocks deletes the earlier layout's lock files of id; the
// caller holds them, and no objgc of this layout opens them.
func (c *Cache) removeOldLocks(id string) {
	for _, suffix := range []string{".usage", ".download", ".lastuse"} {
		c.remove(filepath.Join(c.root, "locks", id+suffix))
	}
}

// removeOldLayout removes what is left of the earlier layout once every
// package moved: packages/ (empty by now), the lock files and markers in
// locks/ (of packages removed long ago) and tmp/ (leftovers of killed
// adds). Each of the three names may also be a FullName of the engine's
// layout, a tenant's package: such a directory is left as it is.
func (c *Cache) removeOldLayout() {
	if tmp := filepath.Join(c.root, "tmp"); !c.enginePackageDir(tmp) {
		c.removeAll(tmp)
	}
	c.remove(filepath.Join(c.root, "packages")) // only when empty
	locks := filepath.Join(c.root, "locks")
	if c.enginePackageDir(locks) {
		return
	}
	ents, err := c.readDir(locks)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.mode.IsRegular() {
			continue
		}
		for _, suffix := range []string{".usage", ".download", ".lastuse"} {
			if id, ok := strings.CutSuffix(e.name, suffix); ok && shaRE.MatchString(id) {
				c.remove(filepath.Join(locks, e.name))
			}
		}
		if e.name == "prune.lock" {
			c.remove(filepath.Join(locks, e.name))
		}
	}
	c.remove(locks) // only when empty
}
