//go:build !linux

package hook

import (
	"errors"
	"os"
)

// stdinFile is Linux's (memfd_create(2)); elsewhere Run writes the
// document to the hook through a pipe.
func stdinFile(doc []byte) (*os.File, error) {
	return nil, errors.ErrUnsupported
}

// outputPipe returns a pipe for the hook's stdout or stderr: r for objgc,
// w for the hook.
func outputPipe() (r, w *os.File, err error) { return os.Pipe() }
