//go:build windows

package lockfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// openFlags: Windows has no O_NOFOLLOW or O_NONBLOCK; Open checks the path
// with Lstat before it opens it and the descriptor after.
const openFlags = 0

func isLinkLoop(error) bool { return false }

// lockOffsetLow and lockOffsetHigh place the byte LockFileEx locks: far
// past any holder record, so that other processes can still read the
// record at offset 0.
const (
	lockOffsetLow  = 0
	lockOffsetHigh = 1 << 30
)

func tryLock(f *os.File, mode Mode) (bool, error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if mode == Exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := &windows.Overlapped{Offset: lockOffsetLow, OffsetHigh: lockOffsetHigh}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) {
	ol := &windows.Overlapped{Offset: lockOffsetLow, OffsetHigh: lockOffsetHigh}
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}

// Held reports whether some process holds a lock on the lock file at
// path; see lockfile_unix.go. A missing file is held by nobody and is not
// created.
func Held(path string) bool {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return false
	}
	f, err := Open("lock file", path, os.O_RDONLY, 0)
	if err != nil {
		return true
	}
	defer f.Close()
	ok, err := tryLock(f, Exclusive)
	if err != nil || !ok {
		return true
	}
	unlockFile(f)
	return false
}

func closeFile(f *os.File) { f.Close() }

// heldOpen is Held for a lock file already open (HeldIn).
func heldOpen(f *os.File) bool {
	ok, err := tryLock(f, Exclusive)
	if err != nil || !ok {
		return true
	}
	unlockFile(f)
	return false
}

// HeldAt is Held for the lock file name in the directory dir.
func HeldAt(dir *os.File, name string) bool { return Held(filepath.Join(dir.Name(), name)) }

// openAtDir opens name in the directory dir.
func openAtDir(dir *os.File, name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir.Name(), name), flag, perm)
}

// sameAtDir reports whether name in dir is the file fi describes.
func sameAtDir(dir *os.File, name string, fi os.FileInfo) (bool, error) {
	pi, err := os.Lstat(filepath.Join(dir.Name(), name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(fi, pi), nil
}

// HolderPID: Windows' locks do not name their holder.
func HolderPID(path string) int { return 0 }
