//go:build !linux

package pkgcache

import "io/fs"

// procAvailable: only Linux shows a process's deleted open files
// (/proc/PID/fd).
func procAvailable() bool { return false }

func readProcOrphans(string, int) orphanScan {
	return orphanScan{why: "this system has no /proc/PID/fd to show deleted open files"}
}

func sameLockFile(a, b fs.FileInfo) bool { return false }
