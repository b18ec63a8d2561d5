//go:build unix

package pkgcache

import (
	"os/user"
	"strconv"
)

// HookUser returns the user the hooks of this cache's packages run as
// when that is not the user running objgc: the owner of the cache root
// when objgc runs as root (effective uid 0) and the root belongs to
// another user, so that a hook that owner could rewrite, with the record
// that vouches for it, runs with no more than the owner's rights
// (docs/cache.md, "Owners"). Its groups are the user's primary group
// and the supplementary groups the group database gives it. nil, nil
// when hooks run as objgc's own user. A *HookUserError when the owner's
// uid has no entry in the user database (or its groups cannot be read):
// then the hooks of the cache's packages must not run at all.
func (s *Session) HookUser() (*Owner, error) {
	c := s.c
	if c.own == nil {
		return nil, nil
	}
	uid := strconv.Itoa(c.own.uid)
	fail := func(err error) (*Owner, error) {
		return nil, &HookUserError{Root: c.root, UID: c.own.uid, Err: err}
	}
	u, err := user.LookupId(uid)
	if err != nil {
		return fail(err)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return fail(err)
	}
	gids, err := u.GroupIds()
	if err != nil {
		return fail(err)
	}
	o := &Owner{Name: u.Username, UID: c.own.uid, GID: gid}
	for _, g := range gids {
		n, err := strconv.Atoi(g)
		if err != nil {
			return fail(err)
		}
		o.Groups = append(o.Groups, n)
	}
	if o.Name == "" {
		o.Name = uid
	}
	return o, nil
}
