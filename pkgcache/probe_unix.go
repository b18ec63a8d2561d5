//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package pkgcache

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

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
