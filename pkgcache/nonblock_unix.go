//go:build unix && !linux

package pkgcache

import "syscall"

const openNonblock = syscall.O_NONBLOCK
