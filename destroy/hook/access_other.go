//go:build !unix

package hook

import (
	"fmt"
	"io/fs"
)

// checkExec tells a hook without any execute bit (where files have no
// Unix owner, the bits are all there is to ask).
func checkExec(path string, fi fs.FileInfo) error {
	if fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s: %w (mode %v)", path, ErrNotExecutable, fi.Mode().Perm())
	}
	return nil
}
