//go:build !linux

package pkgcache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"syscall"
)

// syncStage makes everything written under stage durable where syncfs(2)
// does not exist: one pass of fsync(2) over the files (names are
// '/'-separated, relative to stage), then over their directories, deepest
// first, after everything was written.
func syncStage(sr *os.Root, stage string, files []string) error {
	dirs := map[string]bool{".": true}
	for _, name := range files {
		p := filepath.FromSlash(name)
		if err := fsyncIn(sr, p); err != nil {
			return fmt.Errorf("syncing %s: %w", filepath.Join(stage, p), err)
		}
		for d := filepath.Dir(p); d != "."; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	list := make([]string, 0, len(dirs))
	for d := range dirs {
		list = append(list, d)
	}
	sort.Slice(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })
	for _, d := range list {
		if err := fsyncIn(sr, d); err != nil && runtime.GOOS != "windows" && !errors.Is(err, syscall.EINVAL) {
			return fmt.Errorf("syncing %s: %w", filepath.Join(stage, d), err)
		}
	}
	return nil
}

func fsyncIn(sr *os.Root, name string) error {
	f, err := sr.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
