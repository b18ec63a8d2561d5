package pkgcache

import (
	"io/fs"
	"syscall"
	"time"
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
