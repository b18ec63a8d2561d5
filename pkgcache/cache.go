// Package pkgcache manages objgc's on-disk cache of Murano packages
// (DESIGN.md section 8, after the Murano "engine package cache" spec in
// ../shared/seeds/murano-engine-package-cache.rst).
//
// Layout under the cache root:
//
//	packages/<FullName>/<version>@<id>/   one unpacked package; id = hex sha256 of the archive
//	locks/<id>.usage                      usage lock (shared flock, held while a package is read)
//	locks/<id>.download                   download lock (exclusive flock, held while <id> is unpacked)
//	locks/<id>.lastuse                    last-use marker: its mtime is the last use
//	locks/prune.lock                      one prune (or migration) at a time (exclusive flock)
//	packages/<FullName>/.trash.*/         a package being deleted (see trashName)
//	tmp/                                  downloads and staging, on the same filesystem as packages/
//
// A package is one directory, so that deleting it is deleting that
// directory and nothing else. Caches written by objgc before this layout
// hold packages/<FullName>/<version>/<id>/; commands that meet one refuse
// with ErrOldLayout until Migrate moves them.
//
// Lock order: the usage lock of an id is always taken before its download
// lock, never the other way round (the race described in the Murano spec).
// Lock files are never unlinked. A directory under packages/ that exists is
// complete: packages are unpacked in tmp/, validated and renamed into place.
//
// The package imports no CLI code; cmd/ is one caller, plan and apply are
// others (see Session).
package pkgcache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

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

// DefaultVersion is the version of a package whose manifest has no Version
// (Murano's rule).
const DefaultVersion = "0.0.0"

// lastUseInterval is how stale the last-use marker may get before a user
// touches it again (DESIGN.md section 8: updated at most hourly).
const lastUseInterval = time.Hour

// digestsFile is the name of the file, inside each unpacked package, that
// records the sha256 of every file at unpack time. Archives that contain a
// file of this name are rejected.
const digestsFile = ".objgc-digests.json"

// Sentinel errors. Test with errors.Is.
var (
	// ErrPruneRunning: another process (or goroutine) holds locks/prune.lock.
	ErrPruneRunning = errors.New("a prune is already running")
	// ErrLocked: a lock could not be taken before the context ended, or
	// without waiting. It is lockfile.ErrLocked (also destroy.ErrLocked).
	ErrLocked = lockfile.ErrLocked
	// ErrNotFound: the package, version or class is not in the cache.
	ErrNotFound = errors.New("not in the package cache")
	// ErrInvalidPackage: an archive or directory was rejected by Add; the
	// error is an *InvalidPackageError.
	ErrInvalidPackage = errors.New("invalid package")
	// ErrNoPolicy: Prune was called without any policy.
	ErrNoPolicy = errors.New("no prune policy given (outdated, unused-for or max-size)")
	// ErrOldLayout: the cache holds packages in the layout of objgc
	// before packages/<FullName>/<version>@<id>/ (see OldLayoutError).
	ErrOldLayout = errors.New("package cache in the old layout")
)

// OldLayoutError is a cache holding a package directory in the old layout,
// packages/<FullName>/<version>/<id>/. Reading such a cache as if it were
// in the current one would miss those packages (and with them class
// hierarchies and hooks), so every command that meets one refuses until
// Migrate has moved them. It matches ErrOldLayout with errors.Is.
type OldLayoutError struct {
	Root string // the cache directory
	Dir  string // the first old-layout <version> directory found
}

func (e *OldLayoutError) Error() string {
	return fmt.Sprintf("package cache %s is in the old layout (%s holds packages/<FullName>/<version>/<id>/); run objgc cache migrate --cache-dir %s once to move its packages to packages/<FullName>/<version>@<id>/", e.Root, e.Dir, e.Root)
}

// Is reports whether target is ErrOldLayout.
func (e *OldLayoutError) Is(target error) bool { return target == ErrOldLayout }

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
// concurrent use by several goroutines and several processes: all
// coordination goes through flock(2) locks in locks/ (package
// internal/lockfile).
type Cache struct {
	root string
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
	Client HTTPDoer
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
	Now func() time.Time
}

// Open returns the cache rooted at root, creating root, packages/, locks/
// and tmp/ (mode 0755) if needed.
func Open(root string) (*Cache, error) {
	if root == "" {
		return nil, errors.New("opening package cache: empty cache directory")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("opening package cache %s: %w", root, err)
	}
	for _, d := range []string{"packages", "locks", "tmp"} {
		if err := os.MkdirAll(filepath.Join(abs, d), 0o755); err != nil {
			return nil, fmt.Errorf("opening package cache: %w", err)
		}
	}
	return &Cache{root: abs}, nil
}

// ErrNoCache: OpenExisting found no package cache at the directory.
var ErrNoCache = errors.New("no package cache")

// OpenExisting returns the cache rooted at root, which must already be a
// package cache (root/packages/ is a directory): commands that only read
// or clean a cache use it, so that a mistyped directory is an error
// rather than a new, empty cache. It creates nothing but a missing locks/
// or tmp/ inside an existing cache. The error wraps ErrNoCache and names
// the directory.
func OpenExisting(root string) (*Cache, error) {
	if root == "" {
		return nil, errors.New("opening package cache: empty cache directory")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("opening package cache %s: %w", root, err)
	}
	if st, err := os.Stat(filepath.Join(abs, "packages")); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%w at %s (no packages/ directory; objgc cache add creates one)", ErrNoCache, abs)
	}
	return Open(abs)
}

// Root returns the absolute cache directory.
func (c *Cache) Root() string { return c.root }

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
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

func (c *Cache) packagesDir() string { return filepath.Join(c.root, "packages") }
func (c *Cache) tmpDir() string      { return filepath.Join(c.root, "tmp") }
func (c *Cache) lockPath(name string) string {
	return filepath.Join(c.root, "locks", name)
}

// entryDir is packages/<FullName>/<version>@<id>.
func (c *Cache) entryDir(fullName, version, id string) string {
	return filepath.Join(c.root, "packages", fullName, entryName(version, id))
}

func (c *Cache) fullNameDir(fullName string) string {
	return filepath.Join(c.root, "packages", fullName)
}

// entryName is the name of a package directory in its FullName directory:
// <version>@<id>. A version never holds '@' (versionRE), so the name splits
// at its last '@'.
func entryName(version, id string) string { return version + "@" + id }

// parseEntryName splits <version>@<id>; ok is false for any other name
// (a trash directory, a stray file, an old-layout version directory).
func parseEntryName(name string) (version, id string, ok bool) {
	i := strings.LastIndexByte(name, '@')
	if i < 0 {
		return "", "", false
	}
	version, id = name[:i], name[i+1:]
	if !idRE.MatchString(id) || !safeComponent(version, versionRE) {
		return "", "", false
	}
	return version, id, true
}

// oldVersionDir reports whether name, in packages/<FullName>/, is a
// version directory of the old layout: a directory named as a version
// (so neither <version>@<id> nor a trash directory). Only names that look
// like one are looked at (one lstat).
//
// The old layout allowed versions of up to maxComponent bytes, longer
// than the current maxVersion: such a directory is of the old layout too
// (migrate reports it, it cannot be moved), not a stray name to ignore.
func (c *Cache) oldVersionDir(fullName, name string) bool {
	if !fitsComponent(name, versionRE, maxComponent) {
		return false
	}
	st, err := os.Lstat(filepath.Join(c.fullNameDir(fullName), name))
	return err == nil && st.IsDir()
}

func (c *Cache) oldLayout(fullName, name string) error {
	return &OldLayoutError{Root: c.root, Dir: filepath.Join(c.fullNameDir(fullName), name)}
}

var (
	fullNameRE = regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9_.]*$`)
	versionRE  = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.+-]*$`)
	idRE       = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// maxComponent is the longest FullName or version, in bytes. A version is
// shorter (maxVersion): <version>@<id> must fit in one path component of
// 255 bytes with the 64 of the id.
const (
	maxComponent = 200
	maxVersion   = 255 - 1 - 64
)

// safeComponent reports whether s may be used in one path component: the
// characters of a Murano FullName (DESIGN.md section 1) or of a semantic
// version, no "..", at most maxComponent bytes (maxVersion for a version).
func safeComponent(s string, re *regexp.Regexp) bool {
	limit := maxComponent
	if re == versionRE {
		limit = maxVersion
	}
	return fitsComponent(s, re, limit)
}

// fitsComponent is safeComponent with the limit given.
func fitsComponent(s string, re *regexp.Regexp, limit int) bool {
	return len(s) <= limit && re.MatchString(s) && !strings.Contains(s, "..")
}

// inUse reports whether some process holds the usage lock of id: the
// exclusive lock cannot be taken without waiting. A lock file that does
// not exist is held by nobody, and is not created: listing a cache does
// not leave a lock file per package behind.
func (c *Cache) inUse(id string) bool {
	return lockfile.Held(c.lockPath(id + ".usage"))
}

// AcquireUsage takes the usage lock of id (a shared flock on
// locks/<id>.usage, waiting until ctx ends) and records the use on the
// last-use marker (touched at most hourly). The caller holds the lock
// until it calls unlock; while it does, no prune and no adder removes the
// package. AcquireUsage does not check that the package exists: callers
// check after locking (Session does). Errors wrap ErrLocked when ctx ends
// first.
func (c *Cache) AcquireUsage(ctx context.Context, id string) (unlock func(), err error) {
	if !idRE.MatchString(id) {
		return nil, fmt.Errorf("usage lock: %q is not a package id (hex sha256)", id)
	}
	unlock, err = lockfile.Lock(ctx, c.lockPath(id+".usage"), lockfile.Shared)
	if err != nil {
		return nil, err
	}
	c.touchLastUse(id)
	return unlock, nil
}

// touchLastUse updates locks/<id>.lastuse when it is missing or older than
// lastUseInterval. Failures are ignored: the marker is advisory.
func (c *Cache) touchLastUse(id string) {
	p := c.lockPath(id + ".lastuse")
	now := c.now()
	st, err := os.Stat(p)
	if err == nil && now.Sub(st.ModTime()) < lastUseInterval {
		return
	}
	if err != nil {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return
		}
		f.Close()
	}
	_ = os.Chtimes(p, now, now)
}

// lastUse returns the marker's mtime, or the zero time.
func (c *Cache) lastUse(id string) time.Time {
	st, err := os.Stat(c.lockPath(id + ".lastuse"))
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}
