//go:build !windows

package destroy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/gofrs/flock"

	"github.com/objgc/objgc/internal/lockfile"
)

// lockTargetFile takes the exclusive flock(2) on the lock file at path,
// which f (opened and checked by lockTarget) has open, with gofrs/flock:
// its own descriptor, opened without following a link and without waiting
// on a FIFO, created 0644 if the path vanished meanwhile. Without wait it
// tries once; with wait it tries again every lockfile.PollInterval until
// ctx ends. A lock held elsewhere is an error wrapping lockfile.ErrLocked
// (and ctx's error when ctx ended). Once taken, the locked descriptor must
// be f's file (Flock.Stat is an fstat of it): a path replaced between the
// two opens is an error, the lock released. release unlocks and closes
// gofrs/flock's descriptor; f stays open, and closing it releases nothing
// (flock locks belong to the open file description).
func lockTargetFile(ctx context.Context, f *os.File, path string, wait bool) (release func(), err error) {
	fl := flock.New(path,
		flock.SetFlag(os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK),
		flock.SetPermissions(0o644))
	var ok bool
	if wait {
		ok, err = fl.TryLockContext(ctx, lockfile.PollInterval)
		if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, fmt.Errorf("%w (%w)", lockfile.ErrLocked, err)
		}
	} else {
		ok, err = fl.TryLock()
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, lockfile.ErrLocked
	}
	locked, err := fl.Stat()
	if err != nil {
		fl.Unlock()
		return nil, err
	}
	opened, err := f.Stat()
	if err != nil {
		fl.Unlock()
		return nil, err
	}
	if !os.SameFile(locked, opened) {
		fl.Unlock()
		return nil, fmt.Errorf("the lock file was replaced while it was being locked (now %s): %w", fileKindOf(locked), lockfile.ErrNotRegular)
	}
	return func() { fl.Unlock() }, nil
}

// fileKindOf says what fi is, for an error.
func fileKindOf(fi os.FileInfo) string {
	if fi.Mode().IsRegular() {
		return "another regular file"
	}
	return "of type " + fi.Mode().Type().String()
}
