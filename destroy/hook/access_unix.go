//go:build unix

package hook

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// checkExec asks the kernel whether this process may execute the regular
// file path (faccessat(2) with X_OK and AT_EACCESS: the effective ids, as
// execve(2) checks them), so that a hook on a file system mounted noexec,
// or one whose execute bits are not this user's, is found when it is
// looked up rather than when it would run. fi is the file's stat.
// Returns nil, or an error wrapping ErrNoexecMount or ErrNotExecutable.
func checkExec(path string, fi fs.FileInfo) error {
	err := unix.Faccessat(unix.AT_FDCWD, path, unix.X_OK, unix.AT_EACCESS)
	// Where faccessat2 is missing, x/sys answers AT_EACCESS from the
	// mode bits alone: the mount's flags say noexec there.
	if err == nil || errors.Is(err, unix.EACCES) {
		if noexecMount(path) {
			return fmt.Errorf("%s: %w (%w)", path, ErrNotExecutable, ErrNoexecMount)
		}
	}
	switch {
	case err == nil:
		return nil
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s: %w (mode %v)", path, ErrNotExecutable, fi.Mode().Perm())
	case errors.Is(err, unix.EACCES):
		return fmt.Errorf("%s: %w by you (mode %v, %s)", path, ErrNotExecutable, fi.Mode().Perm(), ownerText(fi))
	}
	return fmt.Errorf("%s: %w", path, err)
}

// ownerText names the owner and group of fi as numbers.
func ownerText(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*unix.Stat_t); ok {
		return fmt.Sprintf("owner uid %d, group gid %d", st.Uid, st.Gid)
	}
	return "owner unknown"
}
