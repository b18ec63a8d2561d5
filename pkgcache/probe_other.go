//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package pkgcache

import (
	"io"
	"os"
)

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
