package destroy

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"

	"github.com/objgc/objgc/internal/inputfile"
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

// fileSHA256 hashes the file at path, which a saved plan names; a named
// pipe put there is refused, not waited on (inputfile.Open).
func fileSHA256(path string) (string, error) {
	f, _, err := inputfile.Open(path)
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
