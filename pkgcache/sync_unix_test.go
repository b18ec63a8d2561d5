//go:build unix

package pkgcache

import "syscall"

// syncDisks flushes every file system's dirty data (sync(2)).
func syncDisks() { syscall.Sync() }
