package pkgcache

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// accessTime returns the access time of the file at path. The engine
// reads a package's manifest.yaml each time a deployment loads the
// package, so for a package only the engine uses it is the last use, as
// precisely as the file system's atime option keeps it (docs/cache.md).
func accessTime(path string) (time.Time, bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return time.Time{}, false
	}
	return time.Unix(st.Atim.Unix()), true
}

// readLimited reads the file at path, at most limit bytes (more is an
// error), without changing its access time when the kernel lets the
// process say so (O_NOATIME: the file's owner, or root): objgc reading a
// manifest must not look like the engine using the package.
func readLimited(path string, limit int64) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOATIME, 0)
	if errors.Is(err, unix.EPERM) {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than the limit of %d bytes", path, limit)
	}
	return data, nil
}
