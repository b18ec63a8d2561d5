// Package lockfile is objgc's one way to take advisory file locks, in the
// spirit of cmd/go's internal/lockedfile: apply's lock on <target>.lock
// (package destroy) and the package cache's usage, download and prune
// locks (package pkgcache) go through it.
//
// Vocabulary: a lock is Shared or Exclusive; TryLock takes it without
// waiting (false when another open file description holds a conflicting
// lock), Wait and Lock try again every PollInterval until the lock is
// taken or a context ends. The one error for "someone else holds it" is
// ErrLocked. Locks are flock(2) on Unix and LockFileEx on one byte far past
// the start of the file on Windows (so that readers can still read the
// head of the file); a process that dies releases its locks.
//
// Lock files are opened with Open: never through a symbolic link, never
// waiting for a FIFO's peer (O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC), and only when
// a regular file is there (anything else is an error wrapping
// ErrNotRegular). Lock files are never deleted by this package: a file at
// the same path created after a deletion would be a second, independent
// lock.
package lockfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
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
	if err := clearNonblock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	return f, nil
}

func notRegular(what, path string, fi fs.FileInfo) error {
	var kind string
	m := fi.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		kind = "a symbolic link"
		if to, err := os.Readlink(path); err == nil {
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
// the lock f holds (flock semantics).
func TryLock(f *os.File, mode Mode) (bool, error) { return tryLock(f, mode) }

// Unlock releases f's lock; closing f does too.
func Unlock(f *os.File) { unlockFile(f) }

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

// Lock opens the lock file at path with Open (created with mode 0644 when
// missing) and takes a lock of mode on it, waiting until ctx ends. unlock
// releases the lock and closes the file. Errors name the path; when ctx
// ends first the error wraps ErrLocked and ctx's error.
func Lock(ctx context.Context, path string, mode Mode) (unlock func(), err error) {
	f, err := Open("lock file", path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := Wait(ctx, f, mode); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// TryLockPath is Lock without waiting: nil, nil when another holder has a
// conflicting lock.
func TryLockPath(path string, mode Mode) (unlock func(), err error) {
	f, err := Open("lock file", path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	ok, err := tryLock(f, mode)
	if err != nil || !ok {
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		return nil, nil
	}
	return func() { f.Close() }, nil
}
