//go:build !linux

package pkgcache

import (
	"os"
	"path/filepath"

	"github.com/objgc/objgc/internal/inputfile"
)

const (
	nonblockFlag = openNonblock
	noatimeFlag  = 0
	dirFlag      = 0
)

func clearNonblock(f *os.File) error { return inputfile.ClearNonblock(f) }

// readDirFile returns the names in the open directory f with their types
// (a link is a link).
func readDirFile(f *os.File, dir string) ([]dirEntry, error) {
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]dirEntry, len(ents))
	for i, e := range ents {
		out[i] = dirEntry{name: e.Name(), mode: e.Type()}
	}
	return out, nil
}

// readSubdir lists the directory name in parent (parentPath) beneath the
// cache root, without following a link.
func (c *Cache) readSubdir(_ *os.File, parentPath, name string) ([]dirEntry, error) {
	f, err := c.openNoFollow(filepath.Join(parentPath, name), os.O_RDONLY|dirFlag, true)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readDirFile(f, filepath.Join(parentPath, name))
}

// openDirAt opens the directory name in parent (parentPath) beneath the
// cache root, without following a link.
func (c *Cache) openDirAt(_ *os.File, parentPath, name string) (*os.File, error) {
	return c.openNoFollow(filepath.Join(parentPath, name), os.O_RDONLY|dirFlag, true)
}
