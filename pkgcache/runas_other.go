//go:build !linux

package pkgcache

// Owner is the user a root process becomes to work on a cache that
// belongs to that user. Outside Linux objgc does not switch: a root
// process gives what it creates to the root's owner (see Open).
type Owner struct {
	Name   string
	UID    int
	GID    int
	Groups []int
}

// OwnerToBecome is nil, nil outside Linux.
func OwnerToBecome(string) (*Owner, error) { return nil, nil }

// Become does nothing outside Linux.
func (o *Owner) Become() error { return nil }
