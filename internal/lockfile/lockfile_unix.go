//go:build unix

package lockfile

import (
	"errors"
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

// clearNonblock takes O_NONBLOCK off f (a regular file, where it has no
// effect, but a later reader of the flags should not be surprised).
func clearNonblock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}

func how(mode Mode) int {
	if mode == Shared {
		return unix.LOCK_SH
	}
	return unix.LOCK_EX
}

// flockNB is flock(fd, how|LOCK_NB), retried on EINTR.
func flockNB(fd int, how int) error {
	for {
		err := unix.Flock(fd, how|unix.LOCK_NB)
		if err != unix.EINTR {
			return err
		}
	}
}

func tryLock(f *os.File, mode Mode) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = flockNB(int(fd), how(mode)) }); err != nil {
		return false, err
	}
	if errors.Is(ferr, unix.EWOULDBLOCK) {
		return false, nil
	}
	return ferr == nil, ferr
}

func unlockFile(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.Flock(int(fd), unix.LOCK_UN) })
	}
}

// Held reports whether some process holds a lock on the lock file at path
// (an exclusive lock cannot be taken without waiting). A file that does not
// exist is held by nobody and is not created. It costs three system calls
// (open, flock, close; no fstat and no *os.File) because the package cache
// asks it of every package it lists. The open does not follow a link and
// does not wait on a FIFO (O_NOFOLLOW|O_NONBLOCK). Errors other than "does
// not exist" count as held, so that nobody acts on a guess.
func Held(path string) bool {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ENOENT) {
		return false
	}
	if err != nil {
		return true
	}
	defer unix.Close(fd) // also releases the probe's lock
	return flockNB(fd, unix.LOCK_EX) != nil
}
