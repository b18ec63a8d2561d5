//go:build !unix

package pkgcache

import "os"

// owner is the owner of a cache root; other systems have no such rule.
type owner struct {
	uid, gid int
}

func ownerOf(string) (owner, bool) { return owner{}, false }

func decideOwner(string, owner) (*owner, error) { return nil, nil }

// oldLockFlag opens an earlier layout's lock file for gofrs/flock.
const oldLockFlag = os.O_CREATE | os.O_RDONLY
