//go:build !unix

package pkgcache

import (
	"io"
	"os"
	"path/filepath"
)

// readHeadAt returns up to the first n bytes of the file name in dir.
func readHeadAt(dir *os.File, name, path string, n int) ([]byte, error) {
	return readHead(filepath.Join(dir.Name(), name), n)
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
