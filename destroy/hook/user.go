package hook

import "fmt"

// A User is the user a hook runs as when it is not the user running
// objgc: the owner of the package cache a package's hook comes from, when
// objgc runs as root (effective uid 0) and the cache belongs to another
// user. Such a hook's process gets the user's uid, primary group and
// supplementary groups (the group database's, as initgroups(3) gives
// them) instead of root's, so that a hook the cache's owner could have
// rewritten does no more than that owner could do alone (docs/hooks.md,
// "Who a hook runs as").
type User struct {
	Name   string // the user's name in the user database
	UID    int
	GID    int   // the user's primary group
	Groups []int // supplementary groups
}

// String names u for messages: "murano (uid 998)".
func (u *User) String() string { return fmt.Sprintf("%s (uid %d)", u.Name, u.UID) }
