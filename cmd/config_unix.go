//go:build unix

package cmd

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// systemConfigPath is the system's configuration file, which every user
// reads below their own (docs/config.md).
const systemConfigPath = "/etc/objgc/config.yaml"

// openConfigFile opens path for reading without blocking on a named pipe
// or a device.
func openConfigFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// checkConfigPerms refuses a configuration file that belongs to neither
// the user running objgc (the effective uid) nor root, or that its group
// or others can write.
func checkConfigPerms(path string, st fs.FileInfo) error {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		if err := checkConfigOwner(path, int(sys.Uid), os.Geteuid()); err != nil {
			return err
		}
	}
	if w := st.Mode().Perm() & 0o022; w != 0 {
		who := map[fs.FileMode]string{0o020: "its group", 0o002: "others", 0o022: "its group and others"}[w]
		return fmt.Errorf("%s: not used: writable by %s (mode %s); run chmod go-w %s", path, who, st.Mode().Perm(), path)
	}
	return nil
}

func checkConfigOwner(path string, uid, me int) error {
	if uid == me || uid == 0 {
		return nil
	}
	if me == 0 {
		return fmt.Errorf("%s: not used: owned by uid %d, not by you (uid %d) or root; run chown 0 %s", path, uid, me, path)
	}
	return fmt.Errorf("%s: not used: owned by uid %d, not by you (uid %d) or root; copy it into a file of your own", path, uid, me)
}

// fileUID returns the owner of the file st describes.
func fileUID(st fs.FileInfo) (int, bool) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid), true
	}
	return 0, false
}
