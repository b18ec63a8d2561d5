package pkgcache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// procRoot is where the process table is read. Tests point it at a
// directory that is not one, to act as a system without a readable /proc.
var procRoot = "/proc"

// procAvailable reports whether the process table can be read at all.
func procAvailable() bool {
	_, err := os.Stat(filepath.Join(procRoot, "self", "fd"))
	return err == nil
}

// readProcOrphans reads /proc/PID/fd of every process once and collects
// those that have a deleted <root>/<id>_usage.lock open. The reading is
// complete when objgc runs as root or as owner (the cache's owner, whose
// processes are the engine's) and every process of owner could be read:
// the kernel lets a process read the open files of its own user's
// processes (unless they made themselves undumpable) and root those of
// all.
func readProcOrphans(root string, owner int) orphanScan {
	s := orphanScan{complete: true, held: map[string][]int{}, downloading: map[string][]int{}}
	if !procAvailable() {
		return orphanScan{why: procRoot + "/self/fd cannot be read (no /proc)"}
	}
	if self := os.Geteuid(); self != 0 && self != owner {
		s.complete = false
		s.why = fmt.Sprintf("objgc runs as uid %d, neither root nor the cache's owner (uid %d), and cannot read the open files of the owner's processes", self, owner)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return orphanScan{why: err.Error()}
	}
	prefix := real + string(filepath.Separator)
	d, err := os.Open(procRoot)
	if err != nil {
		return orphanScan{why: err.Error()}
	}
	pids, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return orphanScan{why: err.Error()}
	}
	for _, name := range pids {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		fdDir := filepath.Join(procRoot, name, "fd")
		fds, err := procNames(fdDir)
		if err != nil {
			if s.complete && (errors.Is(err, fs.ErrPermission)) && processUID(filepath.Join(procRoot, name)) == owner {
				s.complete = false
				s.why = fmt.Sprintf("%s cannot be read: %v", fdDir, err)
			}
			continue // gone, or another user's
		}
		for _, fd := range fds {
			p := filepath.Join(fdDir, fd)
			target, err := os.Readlink(p)
			if err != nil {
				continue
			}
			id, suffix, ok := deletedLockName(target, prefix)
			if !ok {
				continue
			}
			// The name may end in " (deleted)" for a file really named so:
			// the link count of the file itself decides.
			if fi, err := os.Stat(p); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink != 0 {
					continue
				}
			}
			if suffix == usageSuffix {
				s.held[id] = append(s.held[id], pid)
			} else {
				s.downloading[id] = append(s.downloading[id], pid)
			}
		}
	}
	return s
}

// processUID is the owner of /proc/PID (the process's real uid), -1 when
// it cannot be read.
func processUID(dir string) int {
	fi, err := os.Stat(dir)
	if err != nil {
		return -1
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1
	}
	return int(st.Uid)
}

// sameLockFile reports whether a and b are the same file in the same
// state of its inode: device, inode number and change time. The change
// time tells a new file apart from a deleted one whose inode number the
// file system gave again.
func sameLockFile(a, b fs.FileInfo) bool {
	x, ok1 := a.Sys().(*syscall.Stat_t)
	y, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && x.Dev == y.Dev && x.Ino == y.Ino && x.Ctim == y.Ctim
}

// procNames lists the directory dir of the process table (not under the
// cache root).
func procNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
