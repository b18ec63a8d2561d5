package destroy

import (
	"os"

	"github.com/objgc/objgc/internal/lockfile"
)

// openRegular opens path (a lock or journal file, what says which) with
// flag through lockfile.Open: never following a symbolic link, never
// waiting for a FIFO's peer, and only a regular file (else an error
// wrapping lockfile.ErrNotRegular that names the path and says what is
// there).
func openRegular(what, path string, flag int, perm os.FileMode) (*os.File, error) {
	return lockfile.Open(what, path, flag, perm)
}
