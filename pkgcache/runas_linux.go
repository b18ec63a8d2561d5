package pkgcache

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// Owner is the user a root process becomes to work on a cache that
// belongs to that user (Become).
type Owner struct {
	Name   string // user name, or the uid when it has none
	UID    int
	GID    int   // the user's primary group, else the cache root's group
	Groups []int // supplementary groups, from the group database
}

// OwnerToBecome returns the owner of the cache root dir when this process
// runs as root (effective uid 0) and the root exists and belongs to
// another user: cache commands then do the cache's work as that user
// (Become), the way logrotate's su directive and runuser do, so that
// nothing the owner arranges under the root (links swapped in, files of
// root's placed there) can make objgc do what the owner could not do
// alone. nil, nil otherwise. dir is the operator's path, followed as
// given; the owner is that of the directory opened.
func OwnerToBecome(dir string) (*Owner, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil, nil // no cache yet: it will be root's own
	}
	defer d.Close()
	st, err := d.Stat()
	if err != nil || !st.IsDir() {
		return nil, nil
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || sys.Uid == 0 {
		return nil, nil
	}
	o := &Owner{Name: strconv.Itoa(int(sys.Uid)), UID: int(sys.Uid), GID: int(sys.Gid)}
	if u, err := user.LookupId(o.Name); err == nil {
		o.Name = u.Username
		if g, err := strconv.Atoi(u.Gid); err == nil {
			o.GID = g
		}
		if gids, err := u.GroupIds(); err == nil {
			for _, s := range gids {
				if g, err := strconv.Atoi(s); err == nil {
					o.Groups = append(o.Groups, g)
				}
			}
		}
	}
	if len(o.Groups) == 0 {
		o.Groups = []int{o.GID}
	}
	return o, nil
}

// Become switches the whole process, every thread (Go applies these
// system calls to all threads on Linux), to o: supplementary groups,
// then real, effective and saved group id, then user id, so that no
// privilege is left to take back. It is for a process that does nothing
// as root afterwards.
func (o *Owner) Become() error {
	if err := syscall.Setgroups(o.Groups); err != nil {
		return fmt.Errorf("becoming %s (uid %d): setgroups: %w", o.Name, o.UID, err)
	}
	if err := syscall.Setresgid(o.GID, o.GID, o.GID); err != nil {
		return fmt.Errorf("becoming %s (uid %d): setresgid: %w", o.Name, o.UID, err)
	}
	if err := syscall.Setresuid(o.UID, o.UID, o.UID); err != nil {
		return fmt.Errorf("becoming %s (uid %d): setresuid: %w", o.Name, o.UID, err)
	}
	return nil
}
