//go:build !linux

package pkgcache

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/objgc/objgc/internal/atomicfile"
)

// syncStage makes everything written under stage durable where syncfs(2)
// does not exist: one pass of fsync(2) over the files (names are
// '/'-separated, relative to stage), then over their directories, deepest
// first, after everything was written.
func syncStage(stage string, files []string) error {
	dirs := map[string]bool{stage: true}
	for _, name := range files {
		p := filepath.Join(stage, filepath.FromSlash(name))
		if err := fsyncPath(p); err != nil {
			return fmt.Errorf("syncing %s: %w", p, err)
		}
		for d := filepath.Dir(p); len(d) > len(stage); d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	list := make([]string, 0, len(dirs))
	for d := range dirs {
		list = append(list, d)
	}
	sort.Slice(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })
	for _, d := range list {
		if err := atomicfile.SyncDir(d); err != nil {
			return fmt.Errorf("syncing %s: %w", d, err)
		}
	}
	return nil
}

func fsyncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
