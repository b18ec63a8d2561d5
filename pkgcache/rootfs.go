package pkgcache

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/objgc/objgc/internal/atomicfile"
	"github.com/objgc/objgc/internal/lockfile"
)

// Everything objgc does under the cache root goes through one handle on
// it, a Go os.Root: no name given to it can lead outside the root, however
// the cache's owner (or a package) arranges links in it. Where a link
// inside the root must not be followed either (the last component of what
// is opened, renamed or removed; every level of the layout), the helpers
// below check with lstat, and compare what they opened with what lstat
// saw. Paths stay absolute in the rest of the package, for messages; the
// helpers take them and turn them into names beneath the root.

// ErrLink is wrapped by the errors of the helpers below for a symbolic
// link where the cache's layout has none: objgc never follows one there.
var ErrLink = errors.New("a symbolic link where the package cache has none")

// linkError names the link at path and where it points.
func (c *Cache) linkError(path string) error {
	to := "?"
	if rel, err := c.rel(path); err == nil {
		if t, err := c.fsys.Readlink(rel); err == nil {
			to = t
		}
	}
	return fmt.Errorf("%s is a symbolic link (to %s): %w; objgc never follows one under the cache root, move it away", path, to, ErrLink)
}

// Close closes the handle on the cache root; c must not be used after.
// A process that ends needs not call it; a test that unmounts the file
// system the cache is on does.
func (c *Cache) Close() error {
	if c.rootDir != nil {
		c.rootDir.Close()
	}
	if c.fsys != nil {
		return c.fsys.Close()
	}
	return nil
}

// rel returns path as a name beneath the cache root ("." for the root).
func (c *Cache) rel(path string) (string, error) {
	r, err := filepath.Rel(c.root, path)
	if err != nil || !(r == "." || filepath.IsLocal(r)) {
		return "", fmt.Errorf("%s is not under the package cache %s", path, c.root)
	}
	return r, nil
}

// openHandle opens the handle on the root, which must exist.
func (c *Cache) openHandle() error {
	if c.fsys != nil {
		return nil
	}
	r, err := os.OpenRoot(c.root)
	if err != nil {
		return fmt.Errorf("opening package cache: %w", err)
	}
	c.fsys = r
	c.rootDir, _ = r.Open(".")
	return nil
}

func (c *Cache) lstat(path string) (fs.FileInfo, error) {
	rel, err := c.rel(path)
	if err != nil {
		return nil, err
	}
	return c.fsys.Lstat(rel)
}

// lstatNoLink returns path's name relative to the root and what is there,
// not following a link: a link is an error wrapping ErrLink.
func (c *Cache) lstatNoLink(path string) (rel string, fi fs.FileInfo, err error) {
	if rel, err = c.rel(path); err != nil {
		return "", nil, err
	}
	if fi, err = c.fsys.Lstat(rel); err != nil {
		return "", nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return "", nil, c.linkError(path)
	}
	return rel, fi, nil
}

// isDir reports whether path is a directory, not a link to one.
func (c *Cache) isDir(path string) bool {
	st, err := c.lstat(path)
	return err == nil && st.IsDir()
}

// isLink reports whether path is a symbolic link.
func (c *Cache) isLink(path string) bool {
	st, err := c.lstat(path)
	return err == nil && st.Mode()&fs.ModeSymlink != 0
}

func (c *Cache) remove(path string) error {
	if r := c.handleFor(filepath.Dir(path)); r != nil {
		return r.Remove(filepath.Base(path))
	}
	rel, err := c.rel(path)
	if err != nil {
		return err
	}
	return c.fsys.Remove(rel)
}

// removeAll removes path and what is under it, never following a link
// (a link is removed, not what it points to).
func (c *Cache) removeAll(path string) error {
	if r := c.handleFor(filepath.Dir(path)); r != nil {
		return r.RemoveAll(filepath.Base(path))
	}
	rel, err := c.rel(path)
	if err != nil {
		return err
	}
	return c.fsys.RemoveAll(rel)
}

// rename renames from to to, both under the root; a link is renamed as
// the link itself.
func (c *Cache) rename(from, to string) error {
	rf, err := c.rel(from)
	if err != nil {
		return err
	}
	rt, err := c.rel(to)
	if err != nil {
		return err
	}
	return c.fsys.Rename(rf, rt)
}

// mkdirAll is os.MkdirAll(dir, 0o755) beneath the root, giving each
// directory it creates to the root's owner. A link on the way is an error
// wrapping ErrLink, not followed.
func (c *Cache) mkdirAll(dir string) error {
	rel, err := c.rel(dir)
	if err != nil {
		return err
	}
	if rel == "." {
		return nil
	}
	st, err := c.fsys.Lstat(rel)
	switch {
	case err == nil && st.IsDir():
		return nil
	case err == nil && st.Mode()&fs.ModeSymlink != 0:
		return c.linkError(dir)
	case err == nil:
		return fmt.Errorf("%s is not a directory", dir)
	}
	if err := c.mkdirAll(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := c.fsys.Mkdir(rel, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) && c.isDir(dir) {
			return nil
		}
		if c.isLink(dir) {
			return c.linkError(dir)
		}
		return err
	}
	return c.chown(dir)
}

// chown gives path (not following a link) to the root's owner when objgc
// runs as root on another user's cache.
func (c *Cache) chown(path string) error {
	if c.own == nil {
		return nil
	}
	rel, err := c.rel(path)
	if err != nil {
		return err
	}
	return c.fsys.Lchown(rel, c.own.uid, c.own.gid)
}

func (c *Cache) chownFile(f *os.File) error {
	if c.own == nil {
		return nil
	}
	return f.Chown(c.own.uid, c.own.gid)
}

// chownTree gives dir and everything under it to the root's owner,
// walking beneath the root without following links.
func (c *Cache) chownTree(dir string) error {
	if c.own == nil {
		return nil
	}
	return c.walk(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return c.chown(p)
	})
}

// walk calls fn for dir and everything under it, in lexical order,
// beneath the root, never following a link (a link is passed to fn as
// itself), as fs.WalkDir does, with absolute paths.
func (c *Cache) walk(dir string, fn func(path string, d fs.DirEntry, err error) error) error {
	rel, err := c.rel(dir)
	if err != nil {
		return err
	}
	sub := c.fsys.FS()
	return fs.WalkDir(sub, filepath.ToSlash(rel), func(p string, d fs.DirEntry, err error) error {
		return fn(filepath.Join(c.root, filepath.FromSlash(p)), d, err)
	})
}

// openNoFollow opens path beneath the root with flag (never O_CREATE),
// without following a link at its last component and without waiting for
// a FIFO's peer, and checks that it is a regular file (a directory when
// dir): anything else is an error naming the path.
func (c *Cache) openNoFollow(path string, flag int, dir bool) (*os.File, error) {
	rel, before, err := c.lstatNoLink(path)
	if err != nil {
		return nil, err
	}
	if err := wantKind(path, before.Mode(), dir); err != nil {
		return nil, err
	}
	// O_DIRECTORY fails on anything but a directory before open(2)
	// could wait on a FIFO: a directory needs no O_NONBLOCK (which would
	// only make Go try to register it with its poller).
	nb := nonblockFlag
	if dir && dirFlag != 0 {
		nb = 0
	}
	f, err := c.fsys.OpenFile(rel, flag|nb|noatimeFlag, 0)
	if err != nil && noatimeFlag != 0 && errors.Is(err, fs.ErrPermission) {
		f, err = c.fsys.OpenFile(rel, flag|nb, 0)
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil {
		err = wantKind(path, st.Mode(), dir)
	}
	if err == nil && !os.SameFile(before, st) {
		err = fmt.Errorf("%s was replaced while objgc opened it", path)
	}
	if err == nil && !dir {
		err = clearNonblock(f)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func wantKind(path string, m fs.FileMode, dir bool) error {
	switch {
	case dir && m.IsDir(), !dir && m.IsRegular():
		return nil
	case dir:
		return fmt.Errorf("%s is a %s, not a directory", path, atomicfile.Kind(m))
	}
	return fmt.Errorf("%s is a %s, not a regular file: %w", path, atomicfile.Kind(m), lockfile.ErrNotRegular)
}

// readFile reads the regular file at path beneath the root (see
// openNoFollow), at most limit bytes (more is an error).
func (c *Cache) readFile(path string, limit int64) ([]byte, error) {
	f, err := c.openNoFollow(path, os.O_RDONLY, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAllLimited(f, path, limit)
}

func readAllLimited(f *os.File, path string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than the limit of %d bytes", path, limit)
	}
	return data, nil
}

// createExcl creates the file name in dir beneath the root (O_EXCL, so
// that nothing already there, a link least of all, is opened), mode perm.
func (c *Cache) createExcl(path string, flag int, perm os.FileMode) (*os.File, error) {
	rel, err := c.rel(path)
	if err != nil {
		return nil, err
	}
	return c.fsys.OpenFile(rel, flag|os.O_CREATE|os.O_EXCL, perm)
}

// createTemp is os.CreateTemp(dir, prefix+"*") beneath the root.
func (c *Cache) createTemp(dir, prefix string) (*os.File, string, error) {
	for range 100 {
		p := filepath.Join(dir, prefix+randomSuffix())
		f, err := c.createExcl(p, os.O_RDWR, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, p, err
	}
	return nil, "", fmt.Errorf("creating a temporary file in %s: too many names taken", dir)
}

// mkdirTemp is os.MkdirTemp(dir, prefix+"*") beneath the root.
func (c *Cache) mkdirTemp(dir, prefix string) (string, error) {
	for range 100 {
		p := filepath.Join(dir, prefix+randomSuffix())
		rel, err := c.rel(p)
		if err != nil {
			return "", err
		}
		err = c.fsys.Mkdir(rel, 0o700)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return p, err
	}
	return "", fmt.Errorf("creating a temporary directory in %s: too many names taken", dir)
}

func randomSuffix() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// subRoot opens a handle on the directory dir beneath the root, which must
// be a directory and not a link: a package directory is read, and a
// staged one written, through it, so that nothing in the package can lead
// out of it.
func (c *Cache) subRoot(dir string) (*os.Root, error) {
	rel, before, err := c.lstatNoLink(dir)
	if err != nil {
		return nil, err
	}
	if !before.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	r, err := c.fsys.OpenRoot(rel)
	if err != nil {
		return nil, err
	}
	st, err := r.Stat(".")
	if err != nil || !os.SameFile(before, st) {
		r.Close()
		if err == nil {
			err = fmt.Errorf("%s was replaced while objgc opened it", dir)
		}
		return nil, err
	}
	return r, nil
}

// dirEntry is one name in a directory and its type (the d_type of
// getdents: a link is a link, never what it points to).
type dirEntry struct {
	name string
	mode fs.FileMode // type bits only
}

func (d dirEntry) isLink() bool { return d.mode&fs.ModeSymlink != 0 }
func (d dirEntry) isDir() bool  { return d.mode.IsDir() }

// readDirNames lists dir beneath the root (not "." and ".."), in
// directory order. A link at dir is not followed (an error wrapping
// ErrLink).
func (c *Cache) readDirNames(dir string) ([]string, error) {
	ents, err := c.readDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.name
	}
	return names, nil
}

// readDir lists dir beneath the root with each name's type; a link at
// dir is not followed.
func (c *Cache) readDir(dir string) ([]dirEntry, error) {
	rel, err := c.rel(dir)
	if err != nil {
		return nil, err
	}
	var f *os.File
	if rel == "." {
		f, err = c.fsys.Open(".")
	} else {
		f, err = c.openNoFollow(dir, os.O_RDONLY|dirFlag, true)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readDirFile(f, dir)
}

// hashFile returns the hex sha256 and size of the regular file at p
// beneath the root (see openNoFollow).
func (c *Cache) hashFile(p string, h hash.Hash) (string, int64, error) {
	f, err := c.openNoFollow(p, os.O_RDONLY, false)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h.Reset()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// metaHandles are handles on objgc's directories in .objgc/, opened once
// for a run that removes many packages (Prune), so that each removal
// works on them directly rather than resolving .objgc/<dir>/ beneath the
// root again: the same boundary, fewer system calls.
type metaHandles struct {
	records, lastuse, trash *os.Root
	recordsDir              *os.File // records, for readHeadAt
	noLastUse               bool     // .objgc/lastuse/ does not exist: no package has a marker
}

// withHandles returns a copy of c whose removals use handles on
// .objgc/records/, .objgc/lastuse/ and, with trash, .objgc/trash/ (each
// when it is a directory; the trash is created), and what closes them.
func (c *Cache) withHandles(trash bool) (*Cache, func()) {
	h := &metaHandles{}
	if trash && c.mkdirAll(c.trashDir()) == nil {
		h.trash, _ = c.subRoot(c.trashDir())
	}
	h.records, _ = c.subRoot(c.recordsDir())
	var err error
	h.lastuse, err = c.subRoot(c.lastUseDir())
	h.noLastUse = errors.Is(err, fs.ErrNotExist)
	h.recordsDir, _ = c.openRecords()
	cc := *c
	cc.h = h
	return &cc, func() {
		for _, r := range []*os.Root{h.records, h.lastuse, h.trash} {
			if r != nil {
				r.Close()
			}
		}
		if h.recordsDir != nil {
			h.recordsDir.Close()
		}
	}
}

// handleFor returns the handle on dir, when c has one, else nil.
func (c *Cache) handleFor(dir string) *os.Root {
	if c.h == nil {
		return nil
	}
	switch dir {
	case c.recordsDir():
		return c.h.records
	case c.lastUseDir():
		return c.h.lastuse
	case c.trashDir():
		return c.h.trash
	}
	return nil
}
