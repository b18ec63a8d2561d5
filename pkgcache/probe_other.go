//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package pkgcache

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// lockHeld reports whether some process holds the lock file at path; see
// probe_unix.go. Here through gofrs/flock, whose locks differ by system.
func lockHeld(path string) bool {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return false
	}
	unlock, err := tryLockExclusive(path)
	if err != nil || unlock == nil {
		return true
	}
	unlock()
	return false
}

// readHead returns up to the first n bytes of the file at path.
func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	got, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	return buf[:got], nil
}

// claimLock is tryLockExclusive; see probe_unix.go.
func claimLock(path string) (func(), error) { return tryLockExclusive(path) }
