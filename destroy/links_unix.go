//go:build unix

package destroy

import (
	"io/fs"
	"syscall"
)

// linkCount is st's number of hard links (st_nlink).
func linkCount(st fs.FileInfo) uint64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Nlink)
	}
	return 1
}
