//go:build !linux

package pkgcache

import (
	"io/fs"
	"time"
)

// accessTime is not read on this system: the last use of a package only
// the engine uses is then its install time.
func accessTime(fs.FileInfo) (time.Time, bool) { return time.Time{}, false }

// atimeTrust: access times are not read on this system, so the engine's
// use of a package leaves objgc no trace.
func (c *Cache) atimeTrust(bool) (ok bool, slack time.Duration, why string) {
	return false, 0, "access times are not read on this system: the engine's use of a package leaves no trace objgc can see"
}
