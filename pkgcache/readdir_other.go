//go:build !linux

package pkgcache

import (
	"os"

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
