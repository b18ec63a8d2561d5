package cmd

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/objgc/objgc/destroy"
)

// stdinName is the name a document read from standard input goes by.
const stdinName = "<stdin>"

// maxDifferences is how many differences a stale-plan or --require-hooks
// message names before it says how many more there are.
const maxDifferences = destroy.MaxDifferences

func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

func absPaths(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, absPath(p))
	}
	return out
}

// checkHooksDirs refuses a hooks dir that does not exist or is not a
// directory: a typo must not make every object lose its hooks. from says
// where the dirs were set (see settingFrom).
func checkHooksDirs(dirs []string, from string) error {
	for _, d := range dirs {
		st, err := os.Stat(d)
		switch {
		case os.IsNotExist(err):
			return fmt.Errorf("hooks dir %s (from %s): no such directory", d, from)
		case err != nil:
			return fmt.Errorf("hooks dir %s (from %s): %w", d, from, err)
		case !st.IsDir():
			return fmt.Errorf("hooks dir %s (from %s): not a directory", d, from)
		}
	}
	return nil
}
