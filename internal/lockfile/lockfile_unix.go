//go:build unix

package lockfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openFlags are added to every Open: a symbolic link at the path is not
// followed (open fails with ELOOP), and opening a FIFO or a device does not
// wait for a peer (open(2), O_NOFOLLOW and O_NONBLOCK). os.OpenFile adds
// O_CLOEXEC itself.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// isLinkLoop reports whether err is open(2)'s answer to O_NOFOLLOW on a
// symbolic link.
func isLinkLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }

// lockType is the record lock type for mode: a read lock is the shared
// one, a write lock the exclusive one.
func lockType(mode Mode) int16 {
	if mode == Shared {
		return unix.F_RDLCK
	}
	return unix.F_WRLCK
}

// wholeFile is a record lock request of type typ over the whole file:
// from offset 0 to the end, however long the file grows (l_len 0), the
// range Python's fcntl.lockf(fd, cmd) covers with its defaults.
func wholeFile(typ int16) unix.Flock_t {
	return unix.Flock_t{Type: typ, Whence: io.SeekStart, Start: 0, Len: 0}
}

// fcntlLock runs fcntl(fd, cmd, lk), retried on EINTR. A conflicting lock
// is false, nil: fcntl(2) answers EAGAIN or EACCES for it, depending on
// the system.
func fcntlLock(f *os.File, cmd int, lk *unix.Flock_t) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var ferr error
	cerr := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.FcntlFlock(fd, cmd, lk)
			if ferr != unix.EINTR {
				return
			}
		}
	})
	if cerr != nil {
		return false, cerr
	}
	if ferr == unix.EAGAIN || ferr == unix.EACCES {
		return false, nil
	}
	if ferr != nil {
		return false, fmt.Errorf("fcntl: %w", ferr)
	}
	return true, nil
}

// conflicts opens the lock file at path without creating it, following no
// link and waiting on no FIFO, and asks with getlk (F_GETLK or
// F_OFD_GETLK) whether a write lock over the whole file would conflict
// with a lock someone holds. A file that does not exist conflicts with
// nothing; any other error counts as a conflict, so that nobody acts on a
// guess. The open is read-only: a lock file owned by another user can be
// probed.
func conflicts(path string, getlk int) bool {
	return conflictsAt(unix.AT_FDCWD, path, getlk)
}

// conflictsAt is conflicts for the name in the directory open as dirfd
// (openat(2)): the name is resolved beneath that directory, the last
// component not followed.
func conflictsAt(dirfd int, name string, getlk int) bool {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ENOENT) {
		return false
	}
	if err != nil {
		return true
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return true // not a lock file: nobody acts on it
	}
	return fdConflicts(uintptr(fd), getlk)
}

// fdConflicts reports whether a write lock over the whole file open as fd
// would conflict with a lock someone holds (getlk: F_GETLK or
// F_OFD_GETLK); an error counts as a conflict, so that nobody acts on a
// guess.
func fdConflicts(fd uintptr, getlk int) bool {
	lk := wholeFile(unix.F_WRLCK)
	var err error
	for {
		if err = unix.FcntlFlock(fd, getlk, &lk); err != unix.EINTR {
			break
		}
	}
	return err != nil || lk.Type != unix.F_UNLCK
}

// fileConflicts is fdConflicts for an open *os.File.
func fileConflicts(f *os.File, getlk int) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return true
	}
	held := true
	if err := rc.Control(func(fd uintptr) { held = fdConflicts(fd, getlk) }); err != nil {
		return true
	}
	return held
}

// HeldAt is Held for the lock file name in the directory dir (a
// directory opened beneath a root's handle, see LockIn): resolved with
// openat(2) beneath dir, never following a link; as cheap as Held.
func HeldAt(dir *os.File, name string) bool {
	rc, err := dir.SyscallConn()
	if err != nil {
		return true
	}
	held := true
	if err := rc.Control(func(fd uintptr) { held = heldAt(int(fd), name) }); err != nil {
		return true
	}
	return held
}

// openAtDir opens name in the directory dir with openat(2), never
// following a link (O_NOFOLLOW) and never waiting for a FIFO's peer
// (O_NONBLOCK, cleared again before the file is handed to Go, which then
// does not try its poller on it).
func openAtDir(dir *os.File, name string, flag int, perm os.FileMode) (*os.File, error) {
	rc, err := dir.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var oerr error
	if err := rc.Control(func(dfd uintptr) {
		for {
			fd, oerr = unix.Openat(int(dfd), name, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
			if oerr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return nil, err
	}
	if oerr != nil {
		return nil, oerr
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// sameAtDir reports whether name in dir (fstatat(2), not following a
// link) is the file fi describes; a missing name is false, nil.
func sameAtDir(dir *os.File, name string, fi os.FileInfo) (bool, error) {
	want, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false, errors.New("no inode number")
	}
	rc, err := dir.SyscallConn()
	if err != nil {
		return false, err
	}
	var st unix.Stat_t
	var serr error
	if err := rc.Control(func(dfd uintptr) {
		serr = unix.Fstatat(int(dfd), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	}); err != nil {
		return false, err
	}
	if errors.Is(serr, unix.ENOENT) {
		return false, nil
	}
	if serr != nil {
		return false, serr
	}
	return uint64(st.Dev) == uint64(want.Dev) && uint64(st.Ino) == uint64(want.Ino), nil
}

// holderPID asks with getlk (F_GETLK or F_OFD_GETLK) who holds a lock
// that a write lock over the whole file at path would conflict with, and
// returns its process id: above 0 for a classic POSIX lock (fcntl(2) says
// which process holds it: Python's fcntl.lockf, murano-engine's), -1 for
// an open-file-description lock (which belongs to no process, objgc's
// own on Linux), 0 when nobody holds one or the file cannot be asked (a
// holder in another pid namespace is 0 too). The open is as conflicts'.
func holderPID(path string, getlk int) int {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	lk := wholeFile(unix.F_WRLCK)
	for {
		err = unix.FcntlFlock(uintptr(fd), getlk, &lk)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil || lk.Type == unix.F_UNLCK {
		return 0
	}
	if lk.Pid < 0 {
		return -1
	}
	return int(lk.Pid)
}
