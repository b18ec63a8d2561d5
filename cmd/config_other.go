//go:build !unix

package cmd

import (
	"io/fs"
	"os"
)

func openConfigFile(path string) (*os.File, error) { return os.Open(path) }

// checkConfigPerms: owner and mode bits are not checked where there are
// no unix owners and modes (Windows); docs/config.md says so.
func checkConfigPerms(path string, st fs.FileInfo) error { return nil }
