//go:build !unix

package cmd

import "os"

// tempDirUsable: where there are no unix permissions, any directory.
func tempDirUsable(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && st.IsDir()
}
