package pkgcache

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"

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
	buf := make([]byte, 8192)
	var gerr error
	var unknown []int
	cerr := rc.Read(func(fd uintptr) bool {
		for {
			n, err := unix.Getdents(int(fd), buf)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				gerr = &fs.PathError{Op: "readdirent", Path: dir, Err: err}
				return true
			}
			if n <= 0 {
				return true
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
	})
	if cerr != nil {
		return nil, cerr
	}
	if gerr != nil {
		return nil, gerr
	}
	if len(unknown) > 0 {
		// d_type not filled: ask lstat, relative to the directory.
		_ = rc.Control(func(fd uintptr) {
			for _, i := range unknown {
				var st unix.Stat_t
				if unix.Fstatat(int(fd), out[i].name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
					out[i].mode = modeOf(st.Mode)
				} else {
					out[i].mode = fs.ModeIrregular
				}
			}
		})
	}
	return out, nil
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
