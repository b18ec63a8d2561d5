//go:build !linux

package pkgcache

import (
	"fmt"
	"io"
	"os"
	"time"
)

// accessTime is not read on this system: the last use of a package only
// the engine uses is then its install time.
func accessTime(string) (time.Time, bool) { return time.Time{}, false }

// readLimited reads the file at path, at most limit bytes (more is an
// error).
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
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

// atimeTrust: access times are not read on this system, so the engine's
// use of a package leaves objgc no trace.
func atimeTrust(string, string) (ok bool, slack time.Duration, why string) {
	return false, 0, "access times are not read on this system: the engine's use of a package leaves no trace objgc can see"
}
