//go:build !linux

package pkgcache

import "os"

// readDirNames returns the names in directory dir.
func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
