//go:build unix

package inputfile

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openFlags: opening a named pipe or a device does not wait for a peer.
const openFlags = syscall.O_NONBLOCK

// ClearNonblock takes O_NONBLOCK off f, a regular file or a directory
// opened with it so as not to wait for a peer, where it means nothing, so
// that a later reader of the flags is not surprised. Open calls it, and so
// does package lockfile, which opens its lock files the same way.
func ClearNonblock(f *os.File) error {
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
