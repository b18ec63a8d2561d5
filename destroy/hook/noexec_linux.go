package hook

import "golang.org/x/sys/unix"

// noexecMount reports whether path lies on a file system mounted noexec
// (statfs(2) f_flags, ST_NOEXEC).
func noexecMount(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Flags&unix.ST_NOEXEC != 0
}
