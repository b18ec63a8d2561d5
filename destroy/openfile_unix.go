//go:build unix

package destroy

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openFlags are added to every open of a lock or journal file: a symbolic
// link at the path is not followed (open fails with ELOOP), and opening a
// FIFO or a device does not wait for a peer (open(2), O_NOFOLLOW and
// O_NONBLOCK). os.OpenFile adds O_CLOEXEC itself.
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

// tryLock takes the exclusive flock(2) on f without waiting: false when
// another open file description holds it.
func tryLock(f *os.File) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
			if ferr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return false, err
	}
	if errors.Is(ferr, unix.EWOULDBLOCK) {
		return false, nil
	}
	return ferr == nil, ferr
}

// unlockFile releases tryLock's lock (closing f would too).
func unlockFile(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.Flock(int(fd), unix.LOCK_UN) })
	}
}
