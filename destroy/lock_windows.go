package destroy

import (
	"context"
	"os"

	"github.com/objgc/objgc/internal/lockfile"
)

// lockTargetFile takes internal/lockfile's exclusive lock on f (LockFileEx
// on one byte far past the start of the file): gofrs/flock locks the
// first byte on Windows, and a locked byte cannot be read or written
// through another handle, even of the same process, which would keep the
// holder record at offset 0 from being written or read. See the Unix
// version for the contract.
func lockTargetFile(ctx context.Context, f *os.File, _ string, wait bool) (release func(), err error) {
	if wait {
		if err := lockfile.Wait(ctx, f, lockfile.Exclusive); err != nil {
			return nil, err
		}
	} else {
		ok, err := lockfile.TryLock(f, lockfile.Exclusive)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, lockfile.ErrLocked
		}
	}
	return func() { lockfile.Unlock(f) }, nil
}
