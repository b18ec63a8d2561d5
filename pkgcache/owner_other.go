//go:build !unix

package pkgcache

import (
	"os"
	"time"
)

// owner is the owner of a cache root; other systems have no such rule.
type owner struct {
	uid, gid int
}

func (c *Cache) rootOwner() (owner, bool) { return owner{}, false }

func decideOwner(string, owner) (*owner, error) { return nil, nil }

// setTimes sets f's access and modification times to t.
func setTimes(f *os.File, t time.Time) error { return os.Chtimes(f.Name(), t, t) }

// oldLockFlag opens an earlier layout's lock file for gofrs/flock.
const oldLockFlag = os.O_CREATE | os.O_RDONLY
