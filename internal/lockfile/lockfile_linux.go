package lockfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// On Linux the locks are open-file-description locks (fcntl(2),
// F_OFD_SETLK): POSIX record locks that conflict with the classic ones
// Murano's engine takes with fcntl.lockf, but that belong to the open file
// rather than to the process. Waiting is done by polling in Wait rather
// than with F_OFD_SETLKW, so that a context (SIGINT) ends it: a blocked
// fcntl cannot be cancelled without signalling its thread. fasteners,
// which the engine uses, polls too.

func tryLock(f *os.File, mode Mode) (bool, error) {
	lk := wholeFile(lockType(mode))
	return fcntlLock(f, unix.F_OFD_SETLK, &lk)
}

func unlockFile(f *os.File) {
	lk := wholeFile(unix.F_UNLCK)
	fcntlLock(f, unix.F_OFD_SETLK, &lk)
}

func closeFile(f *os.File) { f.Close() }

// Held reports whether some process (or another open file of this one)
// holds a lock on the lock file at path: a write lock over the whole file
// would conflict (F_OFD_GETLK). A file that does not exist is held by
// nobody and is not created. It costs four system calls (open, fstat,
// fcntl, close; no *os.File) because the package cache asks it of every
// package it lists. The open is read-only (F_OFD_GETLK needs no write
// access, so a lock file owned by another user can be probed), does not
// follow a link and does not wait on a FIFO (O_NOFOLLOW|O_NONBLOCK).
// Anything but a regular file counts as held, and so do errors other
// than "does not exist", so that nobody acts on a guess.
func Held(path string) bool {
	return conflicts(path, unix.F_OFD_GETLK)
}

// heldOpen is Held for a lock file already open (HeldIn).
func heldOpen(f *os.File) bool { return fileConflicts(f, unix.F_OFD_GETLK) }

func heldAt(dirfd int, name string) bool { return conflictsAt(dirfd, name, unix.F_OFD_GETLK) }

// HolderPID returns the process id of the holder of a lock on the lock
// file at path (F_OFD_GETLK): above 0 for a classic POSIX lock, such as
// murano-engine's; -1 for an open-file-description lock, such as
// another objgc's, which names no process; 0 for none or when the file
// cannot be asked. It is for messages: the holder may have gone by the
// time it is read.
func HolderPID(path string) int { return holderPID(path, unix.F_OFD_GETLK) }
