//go:build !linux

package snapshot

import (
	"errors"
	"io/fs"
	"os"
)

// mapFile is not used outside Linux: large files are read like small ones.
func mapFile(f *os.File, size int64) ([]byte, error) {
	return nil, errors.ErrUnsupported
}

func unmap(data []byte) {}

func releasePages(data []byte) {}

// sameCtime is true outside Linux: the status change time is not compared.
func sameCtime(a, b fs.FileInfo) bool { return true }
