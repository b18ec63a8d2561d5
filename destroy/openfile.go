package destroy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotRegular is wrapped by the error of LockTarget and OpenJournal when
// the lock or journal path holds something other than a regular file: a
// symbolic link (never followed), a directory, a FIFO, a socket or a
// device.
var ErrNotRegular = errors.New("not a regular file")

// openRegular opens path (a lock or journal file, what says which) with
// flag, never following a symbolic link and never waiting for a FIFO's
// peer (O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC on Unix), then checks with fstat
// that it opened a regular file. Anything else is an error wrapping
// ErrNotRegular that names the path and says what is there. A missing
// file (without O_CREATE) is an error wrapping fs.ErrNotExist.
func openRegular(what, path string, flag int, perm os.FileMode) (*os.File, error) {
	if openFlags == 0 {
		// No O_NOFOLLOW: look first (a race remains, see openFlags).
		if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
			return nil, notRegular(what, path, fi)
		}
	}
	f, err := os.OpenFile(path, flag|openFlags, perm)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, notRegular(what, path, fi)
		}
		if isLinkLoop(err) {
			return nil, fmt.Errorf("%s %s is a symbolic link (%w)", what, path, ErrNotRegular)
		}
		return nil, fmt.Errorf("opening %s %s: %w", what, path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(what, path, fi)
	}
	if err := clearNonblock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	return f, nil
}

func notRegular(what, path string, fi fs.FileInfo) error {
	var kind string
	m := fi.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		kind = "a symbolic link"
		if to, err := os.Readlink(path); err == nil {
			kind += " to " + to
		}
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	default:
		kind = fmt.Sprintf("of type %s", m.Type())
	}
	return fmt.Errorf("%s %s is %s (%w): objgc never follows a link or opens anything but a regular file there; "+
		"move it away if you did not put it there", what, path, kind, ErrNotRegular)
}
