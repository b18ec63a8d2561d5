//go:build unix

package hook

import (
	"os"
	"syscall"
)

// checkWriter checks one file or directory p on the way to hook (see
// CheckWriters); one that cannot be read is left to Run to report.
// runAs is the uid the hook runs as when not objgc's, else -1.
func checkWriter(hook, p string, runAs int) error {
	st, err := os.Stat(p)
	if err != nil {
		return nil
	}
	me := os.Geteuid()
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		if uid := int(sys.Uid); uid != me && uid != 0 && uid != runAs {
			return &WritersError{Hook: hook, Path: p, UID: uid, Me: me, Mode: st.Mode(), Owner: true}
		}
	}
	if st.Mode().Perm()&0o022 != 0 && !(st.IsDir() && st.Mode()&os.ModeSticky != 0) {
		return &WritersError{Hook: hook, Path: p, Me: me, Mode: st.Mode()}
	}
	return nil
}

func isLink(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.Mode()&os.ModeSymlink != 0
}
