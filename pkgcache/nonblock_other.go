//go:build !unix

package pkgcache

const openNonblock = 0
