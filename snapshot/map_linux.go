//go:build linux

package snapshot

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f read-only (mmap(2), MAP_PRIVATE), until
// unmap.
func mapFile(f *os.File, size int64) ([]byte, error) {
	return unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_PRIVATE)
}

// unmap ends a mapping made by mapFile (munmap(2)).
func unmap(data []byte) {
	_ = unix.Munmap(data)
}

// releasePages drops the pages of a mapped document from the process's
// resident set (madvise(2) MADV_DONTNEED). The mapping is read-only and
// backed by the file, so a page read again is mapped again from the page
// cache (or read from the file) with the same bytes; nothing is lost.
func releasePages(data []byte) {
	_ = unix.Madvise(data, unix.MADV_DONTNEED)
}

// sameCtime reports whether a and b have the same status change time.
func sameCtime(a, b fs.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return !ok1 || !ok2 || sa.Ctim == sb.Ctim
}
