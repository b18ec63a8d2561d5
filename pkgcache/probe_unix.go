//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package pkgcache

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// lockHeld reports whether some process holds a flock on the lock file at
// path (the exclusive lock cannot be taken without waiting). A file that
// does not exist is held by nobody and is not created. It is
// gofrs/flock's TryLock and Unlock in three system calls (open, flock,
// close) instead of a dozen: List asks it of every package, and these are
// the same flock(2) locks gofrs/flock takes on these systems. Errors other
// than "does not exist" count as held, so that nobody acts on a guess.
func lockHeld(path string) bool {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return false
	}
	if err != nil {
		return true
	}
	defer unix.Close(fd) // also releases the probe's lock
	for {
		err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			return err != nil
		}
	}
}

// readHead returns up to the first n bytes of the file at path, with one
// open, read and close.
func readHead(path string, n int) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, n)
	got := 0
	for got < n {
		k, err := unix.Read(fd, buf[got:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if k == 0 {
			break
		}
		got += k
	}
	return buf[:got], nil
}

// claimLock takes an exclusive flock on the lock file at path without
// waiting, creating the file if needed: tryLockExclusive in three system
// calls (open, flock, and close to unlock) where gofrs/flock makes about a
// dozen. Prune claims every package it removes with it. It returns nil,
// nil when another holder has the lock.
func claimLock(path string) (func(), error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, &fs.PathError{Op: "flock", Path: path, Err: err}
	}
	return func() { unix.Close(fd) }, nil
}
