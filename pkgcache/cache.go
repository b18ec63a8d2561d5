// Package pkgcache manages murano-engine's own package cache, as the
// engine of Murano 14 keeps it (murano/engine/package_loader.py,
// ApiPackageLoader), so that objgc's plan and apply read the packages the
// engine unpacked and objgc's prune is the separate cache manager the
// Murano "engine package cache" spec leaves open.
//
// Layout under the cache root:
//
//	<FullName>/<version>/<id>/     one unpacked package (the engine's layout)
//	<id>_usage.lock                usage lock (the engine's; shared while a package is read)
//	<id>_download.lock             download lock (the engine's; exclusive while <id> is unpacked)
//	.objgc/records/<id>.json       digests of a package objgc added (see digestRecord)
//	.objgc/lastuse/<id>            last use by objgc: its mtime
//	.objgc/tmp/                    downloads and staging
//	.objgc/trash/                  packages being deleted
//	.objgc/prune.lock              one prune (or migration) at a time
//
// The engine never looks at .objgc/: no FullName starts with a dot, and the
// engine only opens <FullName>/<version>/<id> paths and <id>_*.lock files.
// Nothing of objgc's lives inside <FullName>/<version>/: the engine's
// cleanup takes every name there for a package id.
//
// <id> is opaque: the catalog's package id for what the engine unpacked,
// the hex sha256 of the archive for what Add unpacked. A package with a
// record in .objgc/records/ was installed by objgc; one without was
// installed by the engine, came from the catalog (which tenants upload to)
// and is read as data only (see Package.RunsHooks).
//
// Locks are the engine's: POSIX record locks over the whole file (the
// engine's oslo.concurrency and fasteners call fcntl.lockf), taken through
// internal/lockfile. The usage lock of an id is always taken before its
// download lock, never the other way round (the race described in the
// Murano spec). The engine deletes lock files after its cleanup, so after
// taking a lock objgc checks that the path still names the file it locked
// and tries again if not (see lockAt). objgc never deletes a lock file,
// and counts a process that has a deleted usage lock file open as a use
// of that package (see orphanScan).
//
// The package imports no CLI code; cmd/ is one caller, plan and apply are
// others (see Session).
package pkgcache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/objgc/objgc/internal/lockfile"
)

// DefaultMaxUnpackedSize is the default limit, in bytes, on the sum of the
// sizes of the files an archive expands to (512 MiB).
const DefaultMaxUnpackedSize int64 = 512 << 20

// Default timeouts of an http(s) download (see Cache).
const (
	DefaultConnectTimeout = 30 * time.Second
	DefaultHeaderTimeout  = 60 * time.Second
	DefaultIdleTimeout    = 60 * time.Second
)

// DefaultMaxEntries is the default limit on the number of entries (files,
// directories and links) of one archive. The largest package of Murano's
// own library, io.murano, has fewer than 100.
const DefaultMaxEntries = 10000

// defaultVersion is the version of a package whose manifest has no Version
// (Murano's rule; the engine's directory for it is 0.0.0).
const defaultVersion = "0.0.0"

// lastUseInterval is how stale the last-use marker may get before a user
// touches it again (updated at most hourly).
const lastUseInterval = time.Hour

// metaDirName is the directory, at the cache root, that holds objgc's own
// records. The engine never looks at it: no FullName starts with a dot.
const metaDirName = ".objgc"

// Installers of a package (Entry.InstalledBy).
const (
	installedByObjgc  = "objgc"
	installedByEngine = "engine"
)

// inUseError is ErrInUse: it reads as ErrLocked, which it wraps, so that
// messages stay what they were; only errors.Is tells the two apart.
type inUseError struct{}

func (inUseError) Error() string { return ErrLocked.Error() }
func (inUseError) Unwrap() error { return ErrLocked }

// Sentinel errors. Test with errors.Is.
var (
	// ErrPruneRunning: another process (or goroutine) holds .objgc/prune.lock.
	ErrPruneRunning = errors.New("a prune is already running")
	// ErrLocked: a lock could not be taken before the context ended, or
	// without waiting. It is lockfile.ErrLocked (also destroy.ErrLocked).
	ErrLocked = lockfile.ErrLocked
	// ErrInUse: a package's usage lock is held (a plan, an apply or a
	// deployment of the engine reads it), so it cannot be replaced or
	// removed now. It wraps ErrLocked; callers that must tell "in use"
	// from "a lock not taken in time" test for ErrInUse first.
	ErrInUse error = inUseError{}
	// ErrNotFound: the package, version or class is not in the cache.
	ErrNotFound = errors.New("not in the package cache")
	// ErrInvalidPackage: an archive or directory was rejected by Add; the
	// error is an *InvalidPackageError.
	ErrInvalidPackage = errors.New("invalid package")
	// ErrNoPolicy: Prune was called without any policy.
	ErrNoPolicy = errors.New("no prune policy given (outdated, unused-for or max-size)")
	// ErrOldLayout: the cache is in a layout of an earlier objgc
	// (packages/ and locks/ at the root; see OldLayoutError).
	ErrOldLayout = errors.New("package cache in an earlier objgc layout")
	// ErrNotOwner: the process is neither the owner of the cache root nor
	// root (see OwnerError).
	ErrNotOwner = errors.New("package cache belongs to another user")
	// ErrUnsafeRoot: the cache root can be written by users other than
	// its owner and root (group or other write permission, without the
	// sticky bit): any of them could put links or files there, and no
	// rule of objgc's would tell theirs from the owner's. Refused, as
	// OpenSSH refuses such a ~/.ssh and git a repository owned by someone
	// else.
	ErrUnsafeRoot = errors.New("package cache root is writable by other users")
)

// OldLayoutError is a cache in a layout of an earlier objgc:
// packages/<FullName>/<version>@<id>/ or packages/<FullName>/<version>/<id>/
// with locks/ beside. Reading it as the engine's layout would find none of
// its packages (and with them no class hierarchy and no hook), so every
// command refuses it until Migrate has moved them. It matches ErrOldLayout
// with errors.Is.
type OldLayoutError struct {
	Root string // the cache directory
}

func (e *OldLayoutError) Error() string {
	return fmt.Sprintf("package cache %s is in an earlier objgc layout (packages/ and locks/); run objgc cache migrate --cache-dir %s once to move its packages to <FullName>/<version>/<id>/, the layout murano-engine uses", e.Root, e.Root)
}

// Is reports whether target is ErrOldLayout.
func (e *OldLayoutError) Is(target error) bool { return target == ErrOldLayout }

// OwnerError refuses a process that is neither the owner of the cache root
// nor root: what it created there (lock files, records, packages) would be
// its own, and the owner (murano-engine's user) could not open, lock or
// delete them. It matches ErrNotOwner with errors.Is.
type OwnerError struct {
	Root  string
	Owner string // user name, or uid when it has none
	UID   int    // the owner's
	Self  int    // the process's effective uid
}

func (e *OwnerError) Error() string {
	return fmt.Sprintf("package cache %s belongs to %s (uid %d), not to uid %d: objgc would leave files there that %s could not lock or delete; run objgc as that user (sudo -u %s objgc ...), or as root, which does the cache's work as %s",
		e.Root, e.Owner, e.UID, e.Self, e.Owner, e.Owner, e.Owner)
}

// Is reports whether target is ErrNotOwner.
func (e *OwnerError) Is(target error) bool { return target == ErrNotOwner }

// InvalidPackageError says why Add rejected a source. It matches
// ErrInvalidPackage with errors.Is.
type InvalidPackageError struct {
	Source string // the source as given to Add
	Reason string // what is wrong, e.g. `entry "../x" leaves the package`
}

func (e *InvalidPackageError) Error() string {
	return fmt.Sprintf("invalid package %s: %s", e.Source, e.Reason)
}

// Is reports whether target is ErrInvalidPackage.
func (e *InvalidPackageError) Is(target error) bool { return target == ErrInvalidPackage }

// Cache is a package cache rooted at a directory. Its methods are safe for
// concurrent use by several goroutines and several processes (objgc's and
// murano-engine's): all coordination goes through the engine's lock files
// at the root.
type Cache struct {
	root string
	// fsys is the one handle on the root beneath which everything is
	// opened, created, renamed and removed (see rootfs.go); nil until the
	// root exists.
	fsys *os.Root
	// h, when not nil, are handles on .objgc/'s directories for a run
	// that removes many packages (see withHandles).
	h *metaHandles
	// rootDir is the root directory opened through fsys, for the
	// openat(2) of the in-use probe (one system call per package).
	rootDir *os.File
	// own, when not nil, is the owner of the root, to whom everything
	// objgc creates is given (a root process on another user's cache).
	own *owner
	// ownerErr refuses every change: the process is not the owner and
	// cannot give files away.
	ownerErr error
	// MaxUnpackedSize limits, in bytes, what one archive may expand to
	// (and the size of a downloaded archive). Zero means
	// DefaultMaxUnpackedSize.
	MaxUnpackedSize int64
	// MaxEntries limits the number of entries (files, directories, links)
	// of one archive, or of a package directory. Zero means
	// DefaultMaxEntries.
	MaxEntries int
	// Client fetches http(s) sources; nil means a client built from
	// ConnectTimeout and HeaderTimeout, with the proxy of the environment
	// (HTTPS_PROXY, NO_PROXY), like http.DefaultClient.
	client httpDoer
	// ConnectTimeout bounds connecting to the server, TLS handshake
	// included; zero means DefaultConnectTimeout. Used only when Client
	// is nil.
	ConnectTimeout time.Duration
	// HeaderTimeout bounds the wait for the response headers once the
	// request is sent; zero means DefaultHeaderTimeout. Used only when
	// Client is nil.
	HeaderTimeout time.Duration
	// IdleTimeout bounds the wait for each next byte of the body: a
	// download that receives nothing for this long is abandoned; zero
	// means DefaultIdleTimeout. It applies to every Client.
	IdleTimeout time.Duration
	// Now returns the current time; nil means time.Now. Tests set it.
	clock func() time.Time
}

// Open returns the cache rooted at root, creating root (mode 0755) if
// needed. It refuses, creating nothing, a root that belongs to another
// user when the process is not root (*OwnerError); a root process makes
// everything it creates there the root owner's. A cache in an earlier
// objgc layout is an *OldLayoutError, except for Migrate (see
// OpenForMigrate).
func Open(root string) (*Cache, error) {
	c, err := openAt(root)
	if err != nil {
		return nil, err
	}
	if c.ownerErr != nil {
		return nil, c.ownerErr
	}
	if c.fsys == nil {
		// The root itself is the operator's path, created as given.
		if err := os.MkdirAll(c.root, 0o755); err != nil {
			return nil, fmt.Errorf("opening package cache: %w", err)
		}
		if err := c.openHandle(); err != nil {
			return nil, err
		}
	}
	if err := c.checkLayout(); err != nil {
		return nil, err
	}
	return c, nil
}

func openAt(root string) (*Cache, error) {
	if root == "" {
		return nil, errors.New("opening package cache: empty cache directory")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("opening package cache %s: %w", root, err)
	}
	c := &Cache{root: abs}
	// A root that does not exist yet becomes the creator's own.
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		if err := c.openHandle(); err != nil {
			return nil, err
		}
		if err := c.checkRootMode(); err != nil {
			return nil, err
		}
		if o, ok := c.rootOwner(); ok {
			c.own, c.ownerErr = decideOwner(abs, o)
		}
	}
	return c, nil
}

// ErrNoCache: OpenExisting found no package cache at the directory.
var ErrNoCache = errors.New("no package cache")

// IsCache reports whether dir is a package cache: a directory holding
// objgc's .objgc/, an engine's <id>_usage.lock files, an engine's package
// (<FullName>/<version>/<id>/manifest.yaml, names as the layout wants
// them: the engine's cleanup deletes lock files, so a cache may have
// none), or an earlier objgc's packages/ and locks/. A directory that is
// none of these is not taken for one, so that a mistyped --cache-dir
// never has its subdirectories listed, verified or pruned as packages.
func IsCache(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return false
	}
	defer r.Close()
	return (&Cache{root: abs, fsys: r}).isCache()
}

func (c *Cache) isCache() bool {
	if c.fsys == nil {
		return false
	}
	if st, err := c.fsys.Lstat(metaDirName); err == nil && st.IsDir() || c.oldLayout() {
		return true
	}
	names, err := c.readDirNames(c.root)
	if err != nil {
		return false
	}
	for _, n := range names {
		if _, ok := lockID(n, usageSuffix); ok {
			return true
		}
	}
	// An engine's package: <FullName>/<version>/<id>/manifest.yaml, each
	// level a real directory, the manifest a regular file.
	fns, _, err := c.fullNames(false)
	if err != nil {
		return false
	}
	for _, fn := range fns {
		keys, _ := c.scanFullName(fn, false)
		for _, k := range keys {
			if fi, err := c.lstat(filepath.Join(c.entryDir(k.fullName, k.version, k.id), "manifest.yaml")); err == nil && fi.Mode().IsRegular() {
				return true
			}
		}
	}
	return false
}

// OpenExisting returns the cache rooted at root, which must already be a
// package cache (IsCache): commands that only read or clean a cache use
// it, so that a mistyped directory is an error rather than a new, empty
// cache. It creates nothing. The error wraps ErrNoCache and names the
// directory; a cache in an earlier objgc layout is an *OldLayoutError.
// The owner rule of Open applies to the commands that change the cache
// (CheckOwner).
func OpenExisting(root string) (*Cache, error) {
	c, err := openAt(root)
	if err != nil {
		return nil, err
	}
	if !c.isCache() {
		return nil, fmt.Errorf("%w at %s (neither objgc's %s/ nor murano-engine's <FullName>/<version>/<id>/ packages or <id>_usage.lock files; objgc cache add creates one)", ErrNoCache, c.root, metaDirName)
	}
	if err := c.checkLayout(); err != nil {
		return nil, err
	}
	return c, nil
}

// checkRootMode refuses a root that users other than its owner (and
// root) may write: group or other write permission without the sticky
// bit (the sticky bit lets each user rename and delete only their own
// names, as in /tmp).
func (c *Cache) checkRootMode() error {
	st, err := c.fsys.Stat(".")
	if err != nil {
		return fmt.Errorf("opening package cache %s: %w", c.root, err)
	}
	if m := st.Mode(); m.Perm()&0o022 != 0 && m&fs.ModeSticky == 0 && runtime.GOOS != "windows" {
		return fmt.Errorf("%w: %s has mode %s; run chmod go-w %s", ErrUnsafeRoot, c.root, m.Perm(), c.root)
	}
	return nil
}

// CheckOwner returns the *OwnerError that refuses any change to the cache
// by this process (see Open), or nil.
func (c *Cache) CheckOwner() error { return c.ownerErr }

// Root returns the absolute cache directory.
func (c *Cache) Root() string { return c.root }

func (c *Cache) now() time.Time {
	if c.clock != nil {
		return c.clock()
	}
	return time.Now()
}

func (c *Cache) maxUnpacked() int64 {
	if c.MaxUnpackedSize > 0 {
		return c.MaxUnpackedSize
	}
	return DefaultMaxUnpackedSize
}

func (c *Cache) maxEntries() int {
	if c.MaxEntries > 0 {
		return c.MaxEntries
	}
	return DefaultMaxEntries
}

func (c *Cache) metaDir() string              { return filepath.Join(c.root, metaDirName) }
func (c *Cache) tmpDir() string               { return filepath.Join(c.root, metaDirName, "tmp") }
func (c *Cache) trashDir() string             { return filepath.Join(c.root, metaDirName, "trash") }
func (c *Cache) recordsDir() string           { return filepath.Join(c.root, metaDirName, "records") }
func (c *Cache) lastUseDir() string           { return filepath.Join(c.root, metaDirName, "lastuse") }
func (c *Cache) pruneLockPath() string        { return filepath.Join(c.root, metaDirName, "prune.lock") }
func (c *Cache) recordPath(id string) string  { return filepath.Join(c.recordsDir(), id+".json") }
func (c *Cache) lastUsePath(id string) string { return filepath.Join(c.lastUseDir(), id) }

// The engine's lock file names: <root>/<id>_usage.lock and
// <root>/<id>_download.lock (ApiPackageLoader._lock_usage and
// _get_package_by_definition).
const (
	usageSuffix    = "_usage.lock"
	downloadSuffix = "_download.lock"
)

func (c *Cache) usageLockPath(id string) string    { return filepath.Join(c.root, id+usageSuffix) }
func (c *Cache) downloadLockPath(id string) string { return filepath.Join(c.root, id+downloadSuffix) }

// lockID returns the id of a lock file name at the root ending in suffix.
func lockID(name, suffix string) (string, bool) {
	id, ok := strings.CutSuffix(name, suffix)
	return id, ok && idRE.MatchString(id)
}

// entryDir is <root>/<FullName>/<version>/<id>.
func (c *Cache) entryDir(fullName, version, id string) string {
	return filepath.Join(c.root, fullName, version, id)
}

func (c *Cache) fullNameDir(fullName string) string {
	return filepath.Join(c.root, fullName)
}

// oldLayout reports whether the root holds a cache of an earlier objgc
// layout, recognised by its whole structure, never by the names packages/
// and locks/ alone (both are FullNames Murano accepts, and a tenant may
// upload packages named so): packages/ and locks/ are directories (not
// links), and packages/ holds a package of that layout:
// packages/<FullName>/<version>@<id>/ (no name of the engine's layout
// holds an '@'), or packages/<FullName>/<version>/<id>/ when locks/ holds
// a regular file <id>.usage, <id>.download or <id>.lastuse of that id.
func (c *Cache) oldLayout() bool {
	ids := c.oldLockIDs()
	if ids == nil {
		return false
	}
	found := false
	c.oldPackages(ids, func(string, string, string, string) bool {
		found = true
		return false
	})
	return found
}

// oldLockIDs returns the ids that have a lock file of the earlier layout
// in locks/: <id>.usage, <id>.download, <id>.lastuse, each a regular file;
// nil when packages/ or locks/ is not a directory.
func (c *Cache) oldLockIDs() map[string]bool {
	if st, err := c.fsys.Lstat("locks"); err != nil || !st.IsDir() {
		return nil
	}
	if st, err := c.fsys.Lstat("packages"); err != nil || !st.IsDir() {
		return nil
	}
	ents, err := c.readDir(filepath.Join(c.root, "locks"))
	if err != nil {
		return nil
	}
	ids := map[string]bool{}
	for _, e := range ents {
		if e.mode.IsRegular() {
			for _, suffix := range []string{".usage", ".download", ".lastuse"} {
				if id, ok := strings.CutSuffix(e.name, suffix); ok && shaRE.MatchString(id) {
					ids[id] = true
				}
			}
		}
	}
	return ids
}

// oldPackages calls fn for every package of an earlier layout under
// packages/, with its directory, FullName, version and id, until fn
// returns false. A package is a real directory (not a link) at
// packages/<FullName>/<version>@<id>/, or at
// packages/<FullName>/<version>/<id>/ when its id is in ids and its
// <version>/ directory holds nothing but such ids and trash (in a tenant's
// package named packages, that level is a package directory, which holds
// a manifest.yaml: nothing is taken out of it).
func (c *Cache) oldPackages(ids map[string]bool, fn func(dir, fullName, version, id string) bool) {
	pkgs := filepath.Join(c.root, "packages")
	fns, err := c.readDir(pkgs)
	if err != nil {
		return
	}
	for _, f := range fns {
		if !f.isDir() || !validFullName(f.name) {
			continue
		}
		fdir := filepath.Join(pkgs, f.name)
		names, err := c.readDir(fdir)
		if err != nil {
			continue
		}
		for _, n := range names {
			if !n.isDir() {
				continue
			}
			if v, id, ok := strings.Cut(n.name, "@"); ok {
				if shaRE.MatchString(id) && safeComponent(v, versionRE) && !fn(filepath.Join(fdir, n.name), f.name, v, id) {
					return
				}
				continue
			}
			if !safeComponent(n.name, versionRE) {
				continue
			}
			vdir := filepath.Join(fdir, n.name)
			inner, err := c.readDir(vdir)
			if err != nil || !onlyOldIDs(inner) {
				continue
			}
			for _, e := range inner {
				if e.isDir() && ids[e.name] && !fn(filepath.Join(vdir, e.name), f.name, n.name, e.name) {
					return
				}
			}
		}
	}
}

// onlyOldIDs reports whether a <version>/ directory of the oldest layout
// holds nothing but package directories named by a sha256 and trash.
func onlyOldIDs(ents []dirEntry) bool {
	for _, e := range ents {
		if !e.isDir() || !shaRE.MatchString(e.name) && !strings.HasPrefix(e.name, oldTrashPrefix) {
			return false
		}
	}
	return true
}

func (c *Cache) checkLayout() error {
	if c.oldLayout() {
		return &OldLayoutError{Root: c.root}
	}
	return nil
}

var (
	versionRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.+-]*$`)
	// idRE is a package id: the catalog's (a uuid, with or without
	// dashes) or objgc's hex sha256. It never starts with a dot, so no id
	// is objgc's .objgc/.
	idRE  = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$`)
	shaRE = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// maxComponent is the longest FullName or version, in bytes.
const maxComponent = 200

// validFullName reports whether s is a package FullName as Murano accepts
// one (murano/packages/package_base.py, _check_full_name: the Python
// pattern ^[\w\.]+$, whose \w is Unicode's: letters, numbers and '_';
// no leading or trailing dot, no ".."), at most maxComponent bytes, so
// that it is one safe path component. A FullName Python's $ would let end
// in a newline is not one: no file name objgc shows or uses ends so.
func validFullName(s string) bool {
	if s == "" || len(s) > maxComponent || !utf8.ValidString(s) ||
		s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for _, r := range s {
		if r != '.' && r != '_' && !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			return false
		}
	}
	return true
}

// safeComponent reports whether s may be used in one path component: the
// characters of a Murano FullName or of a semantic version, no "..", at
// most maxComponent bytes.
func safeComponent(s string, re *regexp.Regexp) bool {
	return len(s) <= maxComponent && re.MatchString(s) && !strings.Contains(s, "..")
}

// inUse reports whether some process (objgc or the engine) holds the
// usage lock of id: the exclusive lock cannot be taken without waiting. A
// lock file that does not exist is held by nobody, and is not created:
// listing a cache does not leave a lock file per package behind.
func (c *Cache) inUse(id string) bool { return c.held(id + usageSuffix) }

// held reports whether some process holds a lock on the lock file name
// at the root (lockfile.Held, beneath the root's handle).
func (c *Cache) held(name string) bool {
	if c.rootDir != nil {
		return lockfile.HeldAt(c.rootDir, name)
	}
	return lockfile.HeldIn(c.fsys, name)
}

// UsageLockHolder returns the process id of who holds package id's usage
// lock, for a message saying who uses it: above 0 for a classic POSIX
// lock (murano-engine's, fcntl.lockf), -1 for a lock that names no
// process (objgc's own open-file-description locks on Linux), 0 for none
// or unknown. The holder may be gone by the time it is named.
func (c *Cache) UsageLockHolder(id string) int {
	return lockfile.HolderPID(c.usageLockPath(id))
}

// lockAt takes a lock of mode on the lock file at path (created, mode
// 0644, and given to the root's owner, when missing), waiting until ctx
// ends.
//
// The engine deletes <id>_usage.lock and <id>_download.lock after its
// cleanup (objgc never deletes one). A process that opened the
// file before the deletion and locks it afterwards holds a lock on a file
// nobody else will ever open: no lock at all. So after locking, the path
// must still name the file locked (same device and inode); if it does not
// the lock is dropped and taken again on the file now there.
func (c *Cache) lockAt(ctx context.Context, path string, mode lockfile.Mode) (unlock func(), err error) {
	return c.lockFile(ctx, path, mode, true)
}

// tryLockAt is lockAt without waiting: nil, nil when another holds a
// conflicting lock.
func (c *Cache) tryLockAt(path string, mode lockfile.Mode) (unlock func(), err error) {
	return c.lockFile(context.Background(), path, mode, false)
}

func (c *Cache) lockFile(ctx context.Context, path string, mode lockfile.Mode, wait bool) (unlock func(), err error) {
	// lockfile re-checks after each lock that path still names the file
	// it locked, and locks again if not (lockfile.Current).
	rel, err := c.rel(path)
	if err != nil {
		return nil, err
	}
	switch {
	case c.rootDir != nil && filepath.Dir(path) == c.root && wait:
		// A lock file at the root (the engine's): openat on the root's
		// descriptor, as cheap as a path.
		unlock, err = lockfile.LockAt(ctx, c.rootDir, rel, path, mode)
	case c.rootDir != nil && filepath.Dir(path) == c.root:
		unlock, err = lockfile.TryLockAt(c.rootDir, rel, path, mode)
	case wait:
		unlock, err = lockfile.LockIn(ctx, c.fsys, rel, path, mode)
	default:
		unlock, err = lockfile.TryLockIn(c.fsys, rel, path, mode)
	}
	if err != nil || unlock == nil {
		return unlock, err
	}
	// The path names the locked file now: give it to the root's owner.
	if err := c.chown(path); err != nil {
		unlock()
		return nil, fmt.Errorf("lock file %s: %w", path, err)
	}
	return unlock, nil
}

// acquireUsage takes the usage lock of id (shared, waiting until ctx
// ends), as the engine does for every package a deployment uses, and
// records the use in .objgc/lastuse/<id> (touched at most hourly). The
// caller holds the lock until it calls unlock; while it does, neither a
// prune nor the engine's cleanup removes the package. acquireUsage does
// not check that the package exists: callers check after locking
// (Session does). Errors wrap ErrLocked when ctx ends first.
func (c *Cache) acquireUsage(ctx context.Context, id string) (unlock func(), err error) {
	if !idRE.MatchString(id) {
		return nil, fmt.Errorf("usage lock: %q is not a package id", id)
	}
	if c.ownerErr != nil {
		return nil, c.ownerErr
	}
	unlock, err = c.lockAt(ctx, c.usageLockPath(id), lockfile.Shared)
	if err != nil {
		return nil, err
	}
	c.touchLastUse(id)
	return unlock, nil
}

// touchLastUse updates .objgc/lastuse/<id> when it is missing or older
// than lastUseInterval. Failures are ignored: the marker is advisory. A
// root process on another user's cache leaves it alone: there it writes
// nothing but what the lock protocol needs (docs/cache.md, "Owners").
func (c *Cache) touchLastUse(id string) {
	if c.own != nil {
		return
	}
	p := c.lastUsePath(id)
	now := c.now()
	st, err := c.lstat(p)
	if err == nil && (!st.Mode().IsRegular() || now.Sub(st.ModTime()) < lastUseInterval) {
		return
	}
	var f *os.File
	if err != nil {
		if c.mkdirAll(c.lastUseDir()) != nil {
			return
		}
		f, err = c.createExcl(p, os.O_WRONLY, 0o644)
	} else {
		f, err = c.openNoFollow(p, os.O_WRONLY, false)
	}
	if err != nil {
		return
	}
	_ = setTimes(f, now)
	f.Close()
}

// recordUse records, in objgc's last-use marker, that e was seen in use
// (a probe found its usage lock held, or an orphaned lock): where access
// times do not show the engine's reads (noatime), that is the only trace
// of its use. Only the owner of the cache, or root, writes the marker;
// e.LastUse is brought up to date.
func (c *Cache) recordUse(e *Entry) {
	if c.ownerErr != nil || !c.isDir(e.Dir) {
		return
	}
	c.touchLastUse(e.ID)
	if t := c.lastUse(e.ID); t.After(e.LastUse) {
		e.LastUse = t
	}
}

// lastUse returns the marker's mtime, or the zero time (also for a marker
// that is not a regular file: it is reported, not read).
func (c *Cache) lastUse(id string) time.Time {
	var st fs.FileInfo
	var err error
	switch {
	case c.h != nil && c.h.noLastUse:
		return time.Time{}
	case c.h != nil && c.h.lastuse != nil:
		st, err = c.h.lastuse.Lstat(id)
	default:
		st, err = c.lstat(c.lastUsePath(id))
	}
	if err != nil || !st.Mode().IsRegular() {
		return time.Time{}
	}
	return st.ModTime()
}

// HookUserError: objgc runs as root on a package cache another user owns,
// whose hooks must run as that user (Session.HookUser), and the owner's
// uid cannot be resolved to a user and groups.
type HookUserError struct {
	Root string // the cache root
	UID  int    // its owner
	Err  error  // from the user or group database
}

func (e *HookUserError) Error() string {
	return fmt.Sprintf("package cache %s belongs to uid %d, which the user database cannot resolve (%v): root runs the hooks of that cache's packages as the cache's owner, never as root; run objgc as that user, or copy the hook into a --hooks-dir only root can write", e.Root, e.UID, e.Err)
}

func (e *HookUserError) Unwrap() error { return e.Err }
