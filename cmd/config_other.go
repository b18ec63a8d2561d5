//go:build !unix

package cmd

import (
	"io/fs"
	"os"
)

// systemConfigPath: none by default where there is no /etc (Windows);
// OBJGC_SYSTEM_CONFIG may name one.
const systemConfigPath = ""

func openConfigFile(path string) (*os.File, error) { return os.Open(path) }

// checkConfigPerms: owner and mode bits are not checked where there are
// no unix owners and modes (Windows); docs/config.md says so.
func checkConfigPerms(path string, st fs.FileInfo) error { return nil }

// fileUID: no unix owners here.
func fileUID(st fs.FileInfo) (int, bool) { return 0, false }
