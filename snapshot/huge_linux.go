//go:build linux

package snapshot

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on amd64 and arm64.
const hugePage = 2 << 20

// adviseHuge asks Linux to back the whole 2 MiB pages inside s's capacity
// with transparent huge pages (madvise(2) MADV_HUGEPAGE; a hint, errors
// ignored). The index arrays of a large model are written once from start
// to end: one fault per 2 MiB instead of one per 4 KiB, which on a virtual
// machine is most of the cost of touching fresh memory
// (docs/performance.md). Arrays under 8 MiB are left alone.
func adviseHuge[T any](s []T) {
	var zero T
	size := uintptr(cap(s)) * unsafe.Sizeof(zero)
	if size < 4*hugePage {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(s[:cap(s)]))
	start := (uintptr(p) + hugePage - 1) &^ (hugePage - 1)
	end := (uintptr(p) + size) &^ (hugePage - 1)
	b := unsafe.Slice((*byte)(unsafe.Add(p, start-uintptr(p))), end-start)
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
}
