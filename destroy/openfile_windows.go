//go:build windows

package destroy

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// openFlags: Windows has no O_NOFOLLOW or O_NONBLOCK; openRegular checks
// the path with Lstat before it opens it and the descriptor after.
const openFlags = 0

func isLinkLoop(error) bool { return false }

func clearNonblock(*os.File) error { return nil }

// lockOffsetLow and lockOffsetHigh place the byte LockFileEx locks: far past any holder record, so
// that other processes can still read the record at offset 0.
const (
	lockOffsetLow  = 0
	lockOffsetHigh = 1 << 30
)

// tryLock takes an exclusive LockFileEx lock on one byte of f without
// waiting: false when another handle holds it.
func tryLock(f *os.File) (bool, error) {
	ol := &windows.Overlapped{Offset: lockOffsetLow, OffsetHigh: lockOffsetHigh}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) {
	ol := &windows.Overlapped{Offset: lockOffsetLow, OffsetHigh: lockOffsetHigh}
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}
