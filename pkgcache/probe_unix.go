//go:build unix

package pkgcache

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// readHeadAt returns up to the first n bytes of the regular file name in
// the directory dir, opened with openat(2) without following a link
// (O_NOFOLLOW) and without waiting for a FIFO's peer (O_NONBLOCK), and
// checked regular: four system calls, since List reads the head of every
// record in the cache. path is what errors show.
func readHeadAt(dir *os.File, name, path string, n int) ([]byte, error) {
	rc, err := dir.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd int
	var oerr error
	if err := rc.Control(func(dfd uintptr) {
		for {
			fd, oerr = unix.Openat(int(dfd), name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
			if !errors.Is(oerr, unix.EINTR) {
				return
			}
		}
	}); err != nil {
		return nil, err
	}
	if errors.Is(oerr, unix.ELOOP) {
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrLink}
	}
	if oerr != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: oerr}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("not a regular file")}
	}
	buf := make([]byte, n)
	got := 0
	for got < n {
		k, err := unix.Read(fd, buf[got:])
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
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

// readHead is readHeadAt for a path (tests).
func readHead(path string, n int) ([]byte, error) {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return readHeadAt(d, filepath.Base(path), path, n)
}
