package pkgcache

import (
	"io/fs"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// accessTime returns the access time in st (an lstat of a package's
// manifest.yaml). The engine reads a package's manifest.yaml each time a
// deployment loads the package, so for a package only the engine uses it
// is the last use, as precisely as the file system's atime option keeps
// it (docs/cache.md).
func accessTime(st fs.FileInfo) (time.Time, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(sys.Atim.Unix()), true
}

// atimeTrust tells how far the access times under the cache root can be
// trusted as the engine's last use. fstatfs(2) of the root says whether
// the file system is mounted noatime (access times never move) or
// relatime (they move at most once a day: slack is a day); with probe, a
// file created in .objgc/tmp/ (beneath the root's handle), its access
// time set two days back, is then read once and must show a newer access
// time, or access times are not kept there (some network and FUSE file
// systems, a bind mount with other options). Without probe (a dry run,
// which writes nothing) the mount flags alone decide.
func (c *Cache) atimeTrust(probe bool) (ok bool, slack time.Duration, why string) {
	dir := c.root
	var st unix.Statfs_t
	if c.rootDir != nil && unix.Fstatfs(int(c.rootDir.Fd()), &st) == nil {
		switch {
		case st.Flags&unix.ST_NOATIME != 0:
			return false, 0, dir + " is on a file system mounted noatime: the engine's reads leave no access time"
		case st.Flags&unix.ST_RELATIME != 0:
			slack = 24 * time.Hour
		}
	}
	if !probe || c.mkdirAll(c.tmpDir()) != nil {
		return true, slack, ""
	}
	f, name, err := c.createTemp(c.tmpDir(), "atime.")
	if err != nil {
		return true, slack, ""
	}
	defer c.remove(name)
	defer f.Close()
	f.WriteString("x")
	past := time.Now().Add(-48 * time.Hour)
	tv := []unix.Timeval{unix.NsecToTimeval(past.UnixNano()), unix.NsecToTimeval(past.Add(-24 * time.Hour).UnixNano())}
	if unix.Futimes(int(f.Fd()), tv) != nil {
		return true, slack, ""
	}
	if _, err := f.ReadAt(make([]byte, 1), 0); err != nil {
		return true, slack, ""
	}
	if fi, err := f.Stat(); err == nil {
		if at, ok := accessTime(fi); ok && !at.After(past.Add(time.Second)) {
			return false, 0, "access times do not advance on the file system of " + dir + " (a file read there kept its access time)"
		}
	}
	return true, slack, ""
}
