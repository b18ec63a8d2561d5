//go:build !linux

package pkgcache

import (
	"io/fs"
	"time"
)

// accessTime is not read on this system: the last use of a package only
// the engine uses is then its install time.
func accessTime(fs.FileInfo) (time.Time, bool) { return time.Time{}, false }
