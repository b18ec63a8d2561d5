// Package inputfile opens the files objgc reads whole (models, saved
// plans, package archives) so that nothing can make it wait: a named
// pipe blocks open(2) until a writer comes and read(2) until it writes, a
// device or a socket may never end. Such a file is refused, before it is
// opened (Check) and again on the descriptor opened (Open), which is
// opened without waiting for a peer (O_NONBLOCK) so that a file swapped
// for a pipe between the two is refused too, not waited on.
package inputfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/objgc/objgc/internal/atomicfile"
)

// ErrNotRegular is wrapped by *NotRegularError.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError is an input that is a named pipe, a socket, a device
// or another file that is neither a regular file nor a directory.
type NotRegularError struct {
	Path string
	Kind string // "named pipe", "socket", "character device", ...
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: is a %s, not a regular file", e.Path, e.Kind)
}

func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// special reports whether m is a file Check and Open refuse: not a
// regular file, not a directory.
func special(m fs.FileMode) bool { return !m.IsRegular() && !m.IsDir() }

// Check stats path (links followed) and returns a *NotRegularError when it
// is a named pipe, a socket, a device or another special file. A
// directory passes (callers say whether they take one); other errors of
// stat(2) are returned as they are.
func Check(path string) (fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if special(st.Mode()) {
		return nil, &NotRegularError{Path: path, Kind: atomicfile.Kind(st.Mode())}
	}
	return st, nil
}

// Open opens path for reading without waiting for a peer (O_NONBLOCK
// where the system has it), checks with fstat(2) that it opened no
// special file (a *NotRegularError otherwise, the file closed), and
// clears O_NONBLOCK again. It returns the file and its status.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && special(st.Mode()) {
		err = &NotRegularError{Path: path, Kind: atomicfile.Kind(st.Mode())}
	}
	if err == nil {
		err = ClearNonblock(f)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// SHA256 returns the lower-case hex sha256 of the file at path, opened as
// Open opens it: a named pipe, socket or device put where a journal or a
// saved plan names a file is refused (*NotRegularError), not waited on.
func SHA256(path string) (string, error) {
	f, _, err := Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
