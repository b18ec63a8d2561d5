package pkgcache

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// syncStage makes everything written under the staging directory stage
// (sr, a handle on it)
// durable with one syncfs(2) on its file system: every file's data, and
// every directory entry created, reach the disk before syncfs returns
// (syncfs(2): "commits all pending writes of the filesystem"). One call
// for the whole package replaces an fsync(2) per file, which on ext4 is
// a journal commit each (docs/cache.md, "Crash safety").
func syncStage(sr *os.Root, stage string, _ []string) error {
	d, err := sr.Open(".")
	if err != nil {
		return fmt.Errorf("syncing %s: %w", stage, err)
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return fmt.Errorf("syncing %s: syncfs: %w", stage, err)
	}
	return nil
}
