package pkgcache

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/objgc/objgc/internal/inputfile"
)

// Flags of the opens beneath the cache root: never wait for a FIFO's
// peer; do not move a file's access time where the kernel lets the
// process say so (O_NOATIME: the file's owner, or root), so that objgc
// reading a manifest does not look like the engine using the package.
const (
	nonblockFlag = unix.O_NONBLOCK
	noatimeFlag  = unix.O_NOATIME
	dirFlag      = unix.O_DIRECTORY
)

func clearNonblock(f *os.File) error { return inputfile.ClearNonblock(f) }

// readDirFile returns the names in the open directory f (not "." and
// ".."), in directory order, each with its type from getdents(2)'s
// d_type: os.File.ReadDir in fewer system calls and allocations (List
// reads every FullName directory of the cache). A file system that does
// not fill d_type gets an lstat of the name.
func readDirFile(f *os.File, dir string) ([]dirEntry, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var out []dirEntry
	cerr := rc.Control(func(fd uintptr) { out, err = readDirFD(int(fd), dir) })
	if cerr != nil {
		return nil, cerr
	}
	return out, err
}

// readDirFD is readDirFile on the descriptor fd of a directory.
func readDirFD(fd int, dir string) ([]dirEntry, error) {
	var out []dirEntry
	var unknown []int
	buf := make([]byte, 8192)
	for {
		n, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: dir, Err: err}
		}
		if n <= 0 {
			break
		}
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			typ := b[18]
			name := b[19:reclen]
			for i, ch := range name {
				if ch == 0 {
					name = name[:i]
					break
				}
			}
			b = b[reclen:]
			s := string(name)
			if s == "." || s == ".." {
				continue
			}
			var m fs.FileMode
			switch typ {
			case unix.DT_DIR:
				m = fs.ModeDir
			case unix.DT_LNK:
				m = fs.ModeSymlink
			case unix.DT_REG:
				m = 0
			case unix.DT_FIFO:
				m = fs.ModeNamedPipe
			case unix.DT_SOCK:
				m = fs.ModeSocket
			case unix.DT_CHR:
				m = fs.ModeDevice | fs.ModeCharDevice
			case unix.DT_BLK:
				m = fs.ModeDevice
			default:
				unknown = append(unknown, len(out))
			}
			out = append(out, dirEntry{name: s, mode: m})
		}
	}
	// d_type not filled: ask lstat, relative to the directory.
	for _, i := range unknown {
		var st unix.Stat_t
		if unix.Fstatat(fd, out[i].name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			out[i].mode = modeOf(st.Mode)
		} else {
			out[i].mode = fs.ModeIrregular
		}
	}
	return out, nil
}

// openDirAt opens the directory name in the open directory parent
// (parentPath in messages) with openat(2), without following a link
// (O_NOFOLLOW; O_DIRECTORY fails on anything else before open could wait
// on a FIFO). The descriptor is not handed to Go's poller, which a
// directory has no use for.
func (c *Cache) openDirAt(parent *os.File, parentPath, name string) (*os.File, error) {
	fd, err := c.openDirFD(parent, parentPath, name)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(parentPath, name)), nil
}

func (c *Cache) openDirFD(parent *os.File, parentPath, name string) (int, error) {
	path := filepath.Join(parentPath, name)
	rc, err := parent.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var oerr error
	if err := rc.Control(func(dfd uintptr) {
		for {
			fd, oerr = unix.Openat(int(dfd), name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
			if !errors.Is(oerr, unix.EINTR) {
				return
			}
		}
	}); err != nil {
		return -1, err
	}
	if (errors.Is(oerr, unix.ELOOP) || errors.Is(oerr, unix.ENOTDIR)) && c.isLink(path) {
		return -1, c.linkError(path)
	}
	if oerr != nil {
		return -1, &fs.PathError{Op: "open", Path: path, Err: oerr}
	}
	return fd, nil
}

// readSubdir lists the directory name in the open directory parent
// (parentPath in messages), opened as openDirAt does: three system calls,
// where a name resolved again from the root costs more per component.
func (c *Cache) readSubdir(parent *os.File, parentPath, name string) ([]dirEntry, error) {
	fd, err := c.openDirFD(parent, parentPath, name)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	return readDirFD(fd, filepath.Join(parentPath, name))
}

func modeOf(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFREG:
		return 0
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	}
	return fs.ModeDevice
}
