//go:build unix && !linux

package lockfile

import (
	"errors"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Outside Linux the locks are classic POSIX record locks (fcntl(2)
// F_SETLK), what Python's fcntl.lockf takes there. They belong to the
// process: the system never makes two locks of one process conflict, and
// closing any descriptor of a file releases all of the process's locks on
// it. The table below restores, for the locks taken through this package,
// what the open-file-description locks of Linux give: a lock held through
// one *os.File conflicts with a lock asked through another, and a file is
// closed only once no other lock of this process on it is held.

type inode struct{ dev, ino uint64 }

type inodeLocks struct {
	held    map[*os.File]Mode // the files of this process that hold a lock
	pending []*os.File        // released files kept open until held is empty
}

var (
	tableMu sync.Mutex
	table   = map[inode]*inodeLocks{}
)

func inodeOf(f *os.File) (inode, error) {
	fi, err := f.Stat()
	if err != nil {
		return inode{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return inode{}, errors.New("no inode number")
	}
	return inode{uint64(st.Dev), uint64(st.Ino)}, nil
}

func tryLock(f *os.File, mode Mode) (bool, error) {
	key, err := inodeOf(f)
	if err != nil {
		return false, err
	}
	tableMu.Lock()
	defer tableMu.Unlock()
	e := table[key]
	if e != nil {
		for g, m := range e.held {
			if g != f && closed(g) {
				// Closed without Unlock: the close released the process's
				// lock on the file, and with it this entry's.
				delete(e.held, g)
				continue
			}
			if g != f && (m == Exclusive || mode == Exclusive) {
				return false, nil
			}
		}
	}
	lk := wholeFile(lockType(mode))
	ok, err := fcntlLock(f, unix.F_SETLK, &lk)
	if !ok || err != nil {
		return ok, err
	}
	if e == nil {
		e = &inodeLocks{held: map[*os.File]Mode{}}
		table[key] = e
	}
	e.held[f] = mode
	return true, nil
}

func unlockFile(f *os.File) {
	key, err := inodeOf(f)
	if err != nil {
		return
	}
	tableMu.Lock()
	defer tableMu.Unlock()
	e := table[key]
	if e == nil {
		return
	}
	if _, ok := e.held[f]; !ok {
		return
	}
	delete(e.held, f)
	if len(e.held) > 0 {
		// Other files of this process still hold the (shared) lock; the
		// process's lock stays as it is.
		return
	}
	lk := wholeFile(unix.F_UNLCK)
	fcntlLock(f, unix.F_SETLK, &lk)
	for _, g := range e.pending {
		g.Close()
	}
	delete(table, key)
}

// closed reports whether f was closed: its descriptor can no longer be
// reached.
func closed(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return true
	}
	return rc.Control(func(uintptr) {}) != nil
}

// closeFile closes f unless another file of this process holds a lock on
// the same file, whose lock the close would release; then f is closed
// with the last of them.
func closeFile(f *os.File) {
	key, err := inodeOf(f)
	if err == nil {
		tableMu.Lock()
		if e := table[key]; e != nil {
			if _, mine := e.held[f]; !mine {
				e.pending = append(e.pending, f)
				tableMu.Unlock()
				return
			}
		}
		tableMu.Unlock()
	}
	f.Close()
}

// Held reports whether some process holds a lock on the lock file at path
// (a write lock over the whole file would conflict, F_GETLK). F_GETLK
// never reports the process's own locks, and closing the probe's
// descriptor would release them, so a file this process locked is
// answered from the table without opening it. A file that does not exist
// is held by nobody and is not created. Errors other than "does not
// exist" count as held.
func Held(path string) bool { return heldAt(unix.AT_FDCWD, path) }

func heldAt(dirfd int, path string) bool {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, path, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return !errors.Is(err, unix.ENOENT)
	}
	if heldHere(inode{uint64(st.Dev), uint64(st.Ino)}) {
		return true
	}
	return conflictsAt(dirfd, path, unix.F_GETLK)
}

// heldHere reports whether this process holds a lock on the file key
// through a descriptor still open: F_GETLK never reports those.
func heldHere(key inode) bool {
	tableMu.Lock()
	defer tableMu.Unlock()
	if e := table[key]; e != nil {
		for g := range e.held {
			if !closed(g) {
				return true
			}
		}
	}
	return false
}

// heldOpen is Held for a lock file already open (HeldIn): this process's
// own locks from the table, others' with F_GETLK.
func heldOpen(f *os.File) bool {
	key, err := inodeOf(f)
	if err != nil {
		return true
	}
	if heldHere(key) {
		return true
	}
	return fileConflicts(f, unix.F_GETLK)
}

// HolderPID returns the process id of the holder of a lock on the lock
// file at path (F_GETLK), 0 for none or when the file cannot be asked; a
// lock of this process's own is not reported (F_GETLK never does). For
// messages only.
func HolderPID(path string) int { return max(holderPID(path, unix.F_GETLK), 0) }
