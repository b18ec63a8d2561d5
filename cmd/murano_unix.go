//go:build unix

package cmd

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tempDirUsable is the test of Python's tempfile._get_default_tempdir,
// which creates and deletes a file in dir: dir is a directory the
// effective user may create files in (write and search permission,
// faccessat with AT_EACCESS), without creating one. A file system
// mounted read-only counts as usable: objgc may run where the engine
// does not, in a unit whose ProtectSystem= makes /tmp read-only for it
// alone, and a read-only mount says nothing about the engine's view.
func tempDirUsable(dir string) bool {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return false
	}
	err = unix.Faccessat(unix.AT_FDCWD, dir, unix.W_OK|unix.X_OK, unix.AT_EACCESS)
	return err == nil || errors.Is(err, unix.EROFS)
}
