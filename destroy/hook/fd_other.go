//go:build !linux

package hook

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
)

// stdinFile is Linux's (memfd_create(2)); elsewhere Run writes the
// document to the hook through a pipe.
func stdinFile(doc []byte) (*os.File, error) {
	return nil, errors.ErrUnsupported
}

// outputPipe returns a pipe for the hook's stdout or stderr: r for objgc,
// w for the hook.
func outputPipe() (r, w *os.File, err error) { return os.Pipe() }

// openHook opens the hook file path for Run and returns it with its
// status (only the status when it is not a regular file: then the file
// is nil). A named pipe is refused from its status before it is opened
// (opening one would block); the file is then the one stat(2) saw, save
// for a swap in the instant between.
func openHook(path string) (*os.File, os.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fi, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// realPath returns path with its links resolved.
func realPath(_ *os.File, path string) (string, error) { return filepath.EvalSymlinks(path) }

// execOpen executes a descriptor only on Linux (/proc/self/fd): os/exec
// has no fexecve(3) elsewhere. The hook runs by its path, checked an
// instant before (docs/hooks.md).
func execOpen(*exec.Cmd, *os.File) bool { return false }

// changeTime is Linux's refinement of Sums' identity; elsewhere nothing
// is remembered and every run reads its hook.
func changeTime(os.FileInfo) int64 { return 0 }
