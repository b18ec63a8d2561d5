//go:build unix

package pkgcache

import (
	"os"
	"time"

	"golang.org/x/sys/unix"

	"os/user"
	"strconv"
	"syscall"
)

// owner is the owner of a cache root.
type owner struct {
	uid, gid int
}

// rootOwner returns the owner of the cache root (fstat of the handle),
// false when it cannot be read.
func (c *Cache) rootOwner() (owner, bool) {
	st, err := c.fsys.Stat(".")
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

// setTimes sets f's access and modification times to t (futimens(2) on
// the open file: nothing is looked up by name).
func setTimes(f *os.File, t time.Time) error {
	tv := []unix.Timeval{unix.NsecToTimeval(t.UnixNano()), unix.NsecToTimeval(t.UnixNano())}
	return unix.Futimes(int(f.Fd()), tv)
}
