//go:build !unix

package pkgcache

// syncDisks is a no-op where sync(2) does not exist.
func syncDisks() {}
