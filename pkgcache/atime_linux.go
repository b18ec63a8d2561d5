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

// atimeTrust tells how far the access times under dir (the cache root)
// can be trusted as the engine's last use. statfs(2) says whether the
// file system is mounted noatime (access times never move) or relatime
// (they move at most once a day: slack is a day); a probe file in
// probeDir, its access time set two days back, is then read once and
// must show a newer access time, or access times are not kept there
// (some network and FUSE file systems, a bind mount with other options).
// probeDir "" skips the probe.
func atimeTrust(dir, probeDir string) (ok bool, slack time.Duration, why string) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err == nil {
		switch {
		case st.Flags&unix.ST_NOATIME != 0:
			return false, 0, dir + " is on a file system mounted noatime: the engine's reads leave no access time"
		case st.Flags&unix.ST_RELATIME != 0:
			slack = 24 * time.Hour
		}
	}
	if probeDir == "" {
		return true, slack, ""
	}
	f, err := os.CreateTemp(probeDir, "atime.")
	if err != nil {
		return true, slack, ""
	}
	name := f.Name()
	defer os.Remove(name)
	f.WriteString("x")
	f.Close()
	past := time.Now().Add(-48 * time.Hour)
	if os.Chtimes(name, past, past.Add(-24*time.Hour)) != nil {
		return true, slack, ""
	}
	if _, err := os.ReadFile(name); err != nil {
		return true, slack, ""
	}
	if at, ok := accessTime(name); ok && !at.After(past.Add(time.Second)) {
		return false, 0, "access times do not advance on the file system of " + dir + " (a file read there kept its access time)"
	}
	return true, slack, ""
}
