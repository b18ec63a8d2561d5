package pkgcache

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/objgc/objgc/internal/atomicfile"
	"github.com/objgc/objgc/internal/lockfile"
)

// MigrateResult is what Migrate did.
type MigrateResult struct {
	// Moved are the packages moved from packages/<FullName>/<version>/<id>/
	// to packages/<FullName>/<version>@<id>/ (Dir is the new directory).
	Moved []Entry `json:"moved"`
	// Duplicates are old-layout copies of packages that were already in
	// the current layout too (added by this objgc meanwhile): the old copy
	// is deleted, the current one kept.
	Duplicates []Entry `json:"duplicates"`
	// InUse are the old-layout packages whose usage lock is held (a plan
	// or apply of an older objgc reads them): they are not moved, and the
	// cache stays in the old layout until Migrate runs again.
	InUse []Entry `json:"in_use"`
	// Left are names in an old version directory that are not packages
	// (nor trash): Migrate does not guess what they are; they keep the
	// cache in the old layout until they are moved or removed by hand.
	Left []Problem `json:"left"`
	// Leftovers counts the trash directories of removals killed under the
	// old layout (<FullName>/<version>/.trash.*) that Migrate deleted.
	Leftovers int `json:"trash_leftovers"`
}

// Done reports whether the cache is now wholly in the current layout (as
// far as Migrate saw): nothing was in use and nothing was left.
func (r MigrateResult) Done() bool { return len(r.InUse) == 0 && len(r.Left) == 0 }

// Migrate moves every package of the old layout,
// packages/<FullName>/<version>/<id>/, to the current one,
// packages/<FullName>/<version>@<id>/, and removes the emptied version
// directories. Packages already in the current layout are not touched,
// so Migrate can run again after it was interrupted or after packages
// were in use.
//
// It runs under locks/prune.lock (exclusive, without waiting: the error
// is ErrPruneRunning while a prune or another migration runs), and moves
// each package holding its usage lock exclusively and then its download
// lock, both without waiting: a package in use is left where it is and
// reported in InUse. A package is moved by one rename, so it is whole in
// one place or the other, never in both nor in neither, also when the
// process is killed. When ctx ends, Migrate moves no further package and
// returns ctx's error with what it did.
func (c *Cache) Migrate(ctx context.Context) (MigrateResult, error) {
	res := MigrateResult{}
	unlock, err := c.lockPrune("migrating")
	if err != nil {
		return res, err
	}
	defer unlock()
	fns, err := readDirNames(c.packagesDir())
	if err != nil {
		return res, fmt.Errorf("migrating: %w", err)
	}
	for _, fn := range fns {
		names, err := readDirNames(c.fullNameDir(fn))
		if err != nil {
			continue // a stray file; verify reports it
		}
		moved := false
		for _, v := range names {
			if !c.oldVersionDir(fn, v) {
				continue
			}
			m, err := c.migrateVersion(ctx, &res, fn, v)
			moved = moved || m
			if err != nil {
				return res, err
			}
		}
		if moved {
			// As after an add: an error here does not undo the renames.
			_ = atomicfile.SyncDir(c.fullNameDir(fn))
		}
	}
	return res, nil
}

// migrateVersion moves the packages of the old version directory
// packages/<fn>/<v>/ and removes it when that leaves it empty. moved says
// whether anything was renamed into packages/<fn>/.
func (c *Cache) migrateVersion(ctx context.Context, res *MigrateResult, fn, v string) (moved bool, err error) {
	vdir := filepath.Join(c.fullNameDir(fn), v)
	ids, err := readDirNames(vdir)
	if err != nil {
		return false, fmt.Errorf("migrating: %w", err)
	}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return moved, err
		}
		p := filepath.Join(vdir, id)
		switch {
		case strings.HasPrefix(id, trashPrefix):
			if os.RemoveAll(p) == nil {
				res.Leftovers++
			}
		case idRE.MatchString(id) && isDir(p) && len(v) > maxVersion:
			// <version>@<id> would not fit in one file name: the new
			// layout cannot hold this package (add refuses its version
			// now), and migrating the rest must not stop at it.
			res.Left = append(res.Left, Problem{Path: p, Problem: fmt.Sprintf("its version is %d bytes, longer than the %d a cached package's version may have now: remove the package (rm -r the path), then migrate again", len(v), maxVersion)})
		case idRE.MatchString(id) && isDir(p):
			m, err := c.migrateEntry(res, fn, v, id)
			moved = moved || m
			if err != nil {
				return moved, err
			}
		default:
			res.Left = append(res.Left, Problem{Path: p, Problem: "not a package of the old layout (<version>/<sha256 id>/): move or remove it by hand, then migrate again"})
		}
	}
	os.Remove(vdir) // fails, leaving it, unless it is empty now
	return moved, nil
}

// migrateEntry moves packages/<fn>/<v>/<id>/ to packages/<fn>/<v>@<id>/
// holding its usage and download locks.
func (c *Cache) migrateEntry(res *MigrateResult, fn, v, id string) (moved bool, err error) {
	from := filepath.Join(c.fullNameDir(fn), v, id)
	to := c.entryDir(fn, v, id)
	e := Entry{FullName: fn, Version: v, ID: id, Dir: to, LastUse: c.lastUse(id)}
	if rec, err := readDigestsHeader(from); err == nil {
		e.Size, e.Installed = rec.Size, rec.Installed
	}
	for _, lock := range []string{".usage", ".download"} {
		unlock, err := lockfile.TryLockPath(c.lockPath(id+lock), lockfile.Exclusive)
		if err != nil {
			return false, fmt.Errorf("migrating %s: %w", from, err)
		}
		if unlock == nil {
			e.Dir, e.InUse = from, true
			res.InUse = append(res.InUse, e)
			return false, nil
		}
		defer unlock()
	}
	if isDir(to) {
		// The same id is in the current layout already: the old copy
		// goes the way of any removal, renamed aside and deleted.
		trash := trashName(to)
		if err := os.Rename(from, trash); err != nil {
			return false, fmt.Errorf("migrating %s: %w", from, err)
		}
		os.RemoveAll(trash)
		res.Duplicates = append(res.Duplicates, e)
		return false, nil
	}
	if err := os.Rename(from, to); err != nil {
		return false, fmt.Errorf("migrating %s: %w", from, err)
	}
	res.Moved = append(res.Moved, e)
	return true, nil
}

// CheckLayout returns an *OldLayoutError (errors.Is ErrOldLayout) when
// some FullName directory of the cache holds a version directory of the
// old layout, nil otherwise. It reads every FullName directory (one
// getdents each) and takes no lock. plan and apply call it before they
// read the cache: without it a lookup would miss the packages of the old
// layout and go on as if they were not cached, without their class
// hierarchies and hooks.
func (c *Cache) CheckLayout() error {
	fns, err := readDirNames(c.packagesDir())
	if err != nil {
		return fmt.Errorf("reading package cache: %w", err)
	}
	for _, fn := range fns {
		names, err := readDirNames(c.fullNameDir(fn))
		if err != nil {
			continue
		}
		for _, name := range names {
			if _, _, ok := parseEntryName(name); !ok && !strings.HasPrefix(name, trashPrefix) && c.oldVersionDir(fn, name) {
				return c.oldLayout(fn, name)
			}
		}
	}
	return nil
}
