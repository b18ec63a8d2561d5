// Package lockfile is objgc's one way to take the package cache's usage,
// download and prune locks (package pkgcache), in the spirit of cmd/go's
// internal/lockedfile. They are the locks murano-engine takes on the same
// files, so that objgc and a running engine keep each other from deleting a
// package in use.
//
// Vocabulary: a lock is Shared or Exclusive; TryLock takes it without
// waiting (false when another holder has a conflicting lock), Wait and Lock
// try again every PollInterval until the lock is taken or a context ends.
// The one error for "someone else holds it" is ErrLocked. A process that
// dies releases its locks.
//
// Which lock, per system:
//
//   - Linux: a POSIX record lock over the whole file (start 0, length 0,
//     "to the end, however long") taken as an open-file-description lock
//     (fcntl(2) F_OFD_SETLK, F_OFD_GETLK). Murano's engine takes its
//     locks with Python's fcntl.lockf (oslo.concurrency and fasteners for
//     the exclusive ones, murano.utils.SharedInterProcessLock for the
//     shared usage lock), which are classic POSIX record locks over the
//     whole file; OFD locks and classic ones conflict with each other.
//     flock(2) locks would not: on Linux they are a separate kind that
//     neither side sees. An OFD lock belongs to the open file, as a flock
//     does, so two opens of one file in one process conflict, and closing
//     another descriptor of the file releases nothing. POSIX record locks
//     are also the kind NFS carries between hosts.
//   - Other Unix systems: classic POSIX record locks (fcntl F_SETLK,
//     F_GETLK), which is what fcntl.lockf takes there. Their limits:
//     they belong to the process, not to the open file, so two locks of one
//     process on one file never conflict, and closing any descriptor of
//     the file releases every lock the process holds on it. This package
//     makes up for both within what goes through it (it keeps a table of
//     the files this process locked: a second lock on one of them is
//     refused as another process's would be, Held answers for them without
//     opening the file, and the descriptor of a released lock stays open
//     while another lock of this process on the same file is held), but
//     not for a descriptor some other code opens and closes on a lock
//     file.
//   - Windows: LockFileEx on one byte far past the start of the file (so
//     that readers can still read the head of the file). Murano's engine on
//     Windows locks one byte with msvcrt.locking at another offset: these
//     locks keep objgc processes apart, not objgc and an engine.
//
// Lock files are opened with Open: never through a symbolic link, never
// waiting for a FIFO's peer (O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC), and only when
// a regular file is there (anything else is an error wrapping
// ErrNotRegular).
//
// Lock files are never deleted by this package, but Murano's engine deletes
// them: after unpacking a package, its cleanup
// (ApiPackageLoader.try_cleanup_cache) takes the usage lock of every other
// id of the same FullName and version without waiting, deletes that
// package, releases the lock and removes <id>_usage.lock and
// <id>_download.lock. A process that opened the old file before the
// removal and is granted its lock after it holds a lock on a file that no
// path names any more, one nobody else will ever test: the next user of
// the path creates a new file and locks that. So Lock and TryLockPath
// check, once the lock is theirs, that the path still names the file they
// locked (Current), and when it does not they let it go, open the path
// again and start over.
package lockfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/objgc/objgc/internal/inputfile"
)

// ErrLocked: another process (or another open file description in this
// process) holds a conflicting lock.
var ErrLocked = errors.New("lock is held by another process")

// ErrNotRegular is wrapped by the error of Open when the path holds
// something other than a regular file: a symbolic link (never followed), a
// directory, a FIFO, a socket or a device.
var ErrNotRegular = errors.New("not a regular file")

// Mode is the kind of lock: several Shared holders at once, or one
// Exclusive holder.
type Mode int

const (
	Shared Mode = iota
	Exclusive
)

// PollInterval is how often Wait and Lock try again while they wait.
const PollInterval = 10 * time.Millisecond

// Open opens path (what says what it is in errors, e.g. "lock file") with
// flag and perm, never following a symbolic link and never waiting for a
// FIFO's peer (O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC on Unix), then checks with
// fstat that it opened a regular file. Anything else is an error wrapping
// ErrNotRegular that names the path and says what is there. A missing file
// (without os.O_CREATE) is an error wrapping fs.ErrNotExist.
func Open(what, path string, flag int, perm os.FileMode) (*os.File, error) {
	return place{path: path}.open(what, flag, perm)
}

// place is where a lock file is: a path, or a name beneath a directory
// handle (an *os.Root, which never leaves its directory) with the path
// that errors show.
type place struct {
	root *os.Root // nil: path alone
	dir  *os.File // or a directory opened beneath such a handle (openat)
	name string   // beneath root or in dir
	path string
}

// in names the lock file name beneath r (path is what errors show, e.g.
// the absolute path): the package cache opens every lock file beneath its
// root's handle, so that no link in the cache can lead a lock file out of
// it (see LockIn).
func in(r *os.Root, name, path string) place { return place{root: r, name: name, path: path} }

func (p place) lstat() (fs.FileInfo, error) {
	if p.root != nil {
		return p.root.Lstat(p.name)
	}
	return os.Lstat(p.path)
}

func (p place) readlink() (string, error) {
	if p.root != nil {
		return p.root.Readlink(p.name)
	}
	return os.Readlink(p.path)
}

// open is Open at p. Beneath a root the last component is checked with
// lstat first, since os.Root follows a link that stays inside it: a link
// there is refused as a link at a path is (a link swapped in after the
// check is caught by the fstat comparison below, and by Current after a
// lock).
func (p place) open(what string, flag int, perm os.FileMode) (*os.File, error) {
	if p.dir != nil {
		f, err := openAtDir(p.dir, p.name, flag, perm)
		if err != nil {
			if fi, lerr := os.Lstat(p.path); lerr == nil && !fi.Mode().IsRegular() {
				return nil, p.notRegular(what, fi)
			}
			return nil, fmt.Errorf("opening %s %s: %w", what, p.path, err)
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", what, p.path, err)
			}
			return nil, p.notRegular(what, fi)
		}
		return f, nil
	}
	if p.root != nil {
		fi, err := p.root.Lstat(p.name)
		switch {
		case err == nil && !fi.Mode().IsRegular():
			return nil, p.notRegular(what, fi)
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("opening %s %s: %w", what, p.path, err)
		}
		f, err := p.root.OpenFile(p.name, flag|openFlags, perm)
		if err != nil {
			return nil, fmt.Errorf("opening %s %s: %w", what, p.path, err)
		}
		ffi, err := f.Stat()
		if err == nil && !ffi.Mode().IsRegular() {
			err = p.notRegular(what, ffi)
		}
		if err == nil {
			if li, lerr := p.root.Lstat(p.name); lerr != nil || !os.SameFile(li, ffi) {
				if lerr == nil {
					err = p.notRegular(what, li)
				} else {
					err = fmt.Errorf("%s %s: %w", what, p.path, lerr)
				}
			}
		}
		if err == nil {
			err = inputfile.ClearNonblock(f)
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	path := p.path
	if openFlags == 0 {
		// No O_NOFOLLOW: look first (a race remains, see openFlags).
		if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
			return nil, notRegular(what, path, fi)
		}
	}
	f, err := os.OpenFile(path, flag|openFlags, perm)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, notRegular(what, path, fi)
		}
		if isLinkLoop(err) {
			return nil, fmt.Errorf("%s %s is a symbolic link (%w)", what, path, ErrNotRegular)
		}
		return nil, fmt.Errorf("opening %s %s: %w", what, path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(what, path, fi)
	}
	if err := inputfile.ClearNonblock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	return f, nil
}

func notRegular(what, path string, fi fs.FileInfo) error {
	return place{path: path}.notRegular(what, fi)
}

func (p place) notRegular(what string, fi fs.FileInfo) error {
	path := p.path
	var kind string
	m := fi.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		kind = "a symbolic link"
		if to, err := p.readlink(); err == nil {
			kind += " to " + to
		}
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	default:
		kind = fmt.Sprintf("of type %s", m.Type())
	}
	return fmt.Errorf("%s %s is %s (%w): objgc never follows a link or opens anything but a regular file there; "+
		"move it away if you did not put it there", what, path, kind, ErrNotRegular)
}

// TryLock takes a lock of mode on f without waiting: false, nil when
// another holder has a conflicting lock. Taking a lock on f again converts
// the lock f holds. A Shared lock needs f open for reading, an Exclusive
// one f open for writing (fcntl(2)). TryLock does not check that f's path
// still names f (see Current): the caller opened f and knows.
func TryLock(f *os.File, mode Mode) (bool, error) { return tryLock(f, mode) }

// Unlock releases f's lock; closing f does too.
func Unlock(f *os.File) { unlockFile(f) }

// Current reports whether path still names the file f has open: lstat(2)
// of path gives the same device and inode as fstat(2) of f. A missing path
// is false, nil. The lock functions call it after taking a lock, because
// Murano's engine deletes lock files (see the package comment); other
// errors are returned.
func Current(f *os.File, path string) (bool, error) {
	return place{path: path}.current(f)
}

func (p place) current(f *os.File) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if p.dir != nil {
		return sameAtDir(p.dir, p.name, fi)
	}
	pi, err := p.lstat()
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(fi, pi), nil
}

// Wait takes a lock of mode on f, trying again every PollInterval until ctx
// ends. When ctx ends first the error wraps both ErrLocked and ctx's error;
// any other error is the system's, unwrapped.
func Wait(ctx context.Context, f *os.File, mode Mode) error {
	for {
		ok, err := tryLock(f, mode)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if err := Sleep(ctx, PollInterval); err != nil {
			return fmt.Errorf("%w (%w)", ErrLocked, err)
		}
	}
}

// Sleep returns nil after d, or ctx's error when ctx ends first.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// maxReopen bounds how often TryLockPath opens a lock file again because
// the path stopped naming the file it locked: each time, some process
// removed the file between our open and our lock, which a cleanup does
// once per package.
const maxReopen = 100

// Lock opens the lock file at path with Open (created with mode 0644 when
// missing) and takes a lock of mode on it, waiting until ctx ends. Once
// the lock is taken it checks that path still names the file it locked
// (Current) and, if not, releases it, opens path again and waits again:
// Murano's engine removes lock files after its cleanup. A Shared lock is
// taken on a descriptor opened for reading only, as the engine's shared
// usage lock is (murano.utils.SharedInterProcessLock), so that a lock file
// one can read but not write can still be locked shared; an Exclusive one
// on a descriptor opened for reading and writing. unlock releases the lock
// and closes the file. Errors name the path; when ctx ends first the error
// wraps ErrLocked and ctx's error.
func Lock(ctx context.Context, path string, mode Mode) (unlock func(), err error) {
	return place{path: path}.lock(ctx, mode)
}

// LockIn is Lock on the lock file name beneath r, a directory handle that
// no name given to it can leave (Go's os.Root): the file is opened beneath
// r, a link at name is refused as at a path, and the check after the lock
// looks at name beneath r. path is what errors show.
func LockIn(ctx context.Context, r *os.Root, name, path string, mode Mode) (unlock func(), err error) {
	return in(r, name, path).lock(ctx, mode)
}

// LockAt is Lock on the lock file name in the directory dir, opened
// beneath a root's handle (see LockIn): opened with openat(2) relative to
// dir, never following a link, never waiting on a FIFO, and checked after
// the lock with fstatat(2) relative to dir. It costs what Lock costs on a
// path. path is what errors show.
func LockAt(ctx context.Context, dir *os.File, name, path string, mode Mode) (unlock func(), err error) {
	return place{dir: dir, name: name, path: path}.lock(ctx, mode)
}

// TryLockAt is TryLockPath on the lock file name in dir (see LockAt).
func TryLockAt(dir *os.File, name, path string, mode Mode) (unlock func(), err error) {
	unlock, _, err = place{dir: dir, name: name, path: path}.tryLock(mode, true)
	return unlock, err
}

// TryLockIn is TryLockPath on the lock file name beneath r (see LockIn).
func TryLockIn(r *os.Root, name, path string, mode Mode) (unlock func(), err error) {
	unlock, _, err = in(r, name, path).tryLock(mode, true)
	return unlock, err
}

// HeldIn is Held for the lock file name beneath r (see LockIn).
func HeldIn(r *os.Root, name string) bool {
	p := in(r, name, name)
	if _, err := p.lstat(); errors.Is(err, fs.ErrNotExist) {
		return false
	}
	f, err := p.open("lock file", os.O_RDONLY, 0)
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	defer closeFile(f)
	return heldOpen(f)
}

func (p place) lock(ctx context.Context, mode Mode) (unlock func(), err error) {
	path := p.path
	for {
		f, err := p.openLock(mode, true)
		if err != nil {
			return nil, err
		}
		if err := Wait(ctx, f, mode); err != nil {
			closeFile(f)
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if unlock, _, err := p.keepIfCurrent(f); unlock != nil || err != nil {
			return unlock, err
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("locking %s: %w (%w)", path, ErrLocked, err)
		}
	}
}

// TryLockPath is Lock without waiting: nil, nil when another holder has a
// conflicting lock. It too checks that path still names the file it locked
// and starts over when not (at most maxReopen times, then an error).
func TryLockPath(path string, mode Mode) (unlock func(), err error) {
	unlock, _, err = TryLockPathInfo(path, mode, true)
	return unlock, err
}

// TryLockPathInfo is TryLockPath that also returns the fstat(2) of the
// file it locked (the one path names while the lock is held), for a
// caller that must know whether it is the file it saw earlier. With
// create false a missing lock file is not created: the error then wraps
// fs.ErrNotExist.
func TryLockPathInfo(path string, mode Mode, create bool) (unlock func(), fi fs.FileInfo, err error) {
	return place{path: path}.tryLock(mode, create)
}

// TryLockAtInfo is TryLockPathInfo on the lock file name in dir (see
// LockAt).
func TryLockAtInfo(dir *os.File, name, path string, mode Mode, create bool) (unlock func(), fi fs.FileInfo, err error) {
	return place{dir: dir, name: name, path: path}.tryLock(mode, create)
}

func (p place) tryLock(mode Mode, create bool) (unlock func(), fi fs.FileInfo, err error) {
	path := p.path
	for range maxReopen {
		f, err := p.openLock(mode, create)
		if err != nil {
			return nil, nil, err
		}
		ok, err := tryLock(f, mode)
		if err != nil || !ok {
			closeFile(f)
			if err != nil {
				return nil, nil, fmt.Errorf("locking %s: %w", path, err)
			}
			return nil, nil, nil
		}
		if unlock, fi, err := p.keepIfCurrent(f); unlock != nil || err != nil {
			return unlock, fi, err
		}
	}
	return nil, nil, fmt.Errorf("locking %s: the file was removed and created again %d times while we locked it", path, maxReopen)
}

// keepIfCurrent is the check Lock and TryLockPath make once f's lock is
// theirs: when p still names f (Current) it returns what releases the
// lock and f's fstat; otherwise it releases f and returns nil, nil, nil
// (open it again and start over), or the error of Current, naming the
// path.
func (p place) keepIfCurrent(f *os.File) (unlock func(), fi fs.FileInfo, err error) {
	path := p.path
	ok, err := p.current(f)
	if err == nil && ok {
		if fi, err = f.Stat(); err == nil {
			return func() { release(f) }, fi, nil
		}
	}
	release(f)
	if err != nil {
		return nil, nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return nil, nil, nil
}

// openLock opens the lock file at p for a lock of mode, creating it
// (0644) when missing and create is true.
func (p place) openLock(mode Mode, create bool) (*os.File, error) {
	flag := os.O_RDWR
	if mode == Shared {
		flag = os.O_RDONLY
	}
	if create {
		flag |= os.O_CREATE
	}
	return p.open("lock file", flag, 0o644)
}

// release gives up f's lock and closes f.
func release(f *os.File) {
	unlockFile(f)
	closeFile(f)
}
