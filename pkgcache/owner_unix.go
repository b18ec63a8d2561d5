//go:build unix

package pkgcache

import (
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// owner is the owner of a cache root.
type owner struct {
	uid, gid int
}

// ownerOf returns the owner of path, false when it cannot be read.
func ownerOf(path string) (owner, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return owner{}, false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return owner{}, false
	}
	return owner{uid: int(sys.Uid), gid: int(sys.Gid)}, true
}

// decideOwner applies the owner rule: the owner of root uses it as it is;
// root (uid 0) gives what it creates to o; anyone else is refused.
func decideOwner(root string, o owner) (*owner, error) {
	self := os.Geteuid()
	switch {
	case o.uid == self:
		return nil, nil
	case self == 0:
		return &o, nil
	}
	name := strconv.Itoa(o.uid)
	if u, err := user.LookupId(name); err == nil && u.Username != "" {
		name = u.Username
	}
	return nil, &OwnerError{Root: root, Owner: name, UID: o.uid, Self: self}
}

// oldLockFlag opens an earlier layout's lock file for gofrs/flock: never
// through a link, never waiting on a FIFO.
const oldLockFlag = os.O_CREATE | os.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK
