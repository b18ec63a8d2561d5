//go:build !unix

package pkgcache

// HookUser is nil, nil without Unix users: hooks run as objgc's user.
func (s *Session) HookUser() (*Owner, error) { return nil, nil }
