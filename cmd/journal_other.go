//go:build !unix

package cmd

import (
	"io"
	"os"
)

// journalStderr: no systemd journal here.
func journalStderr(stderr *os.File, getenv func(string) string) (w io.Writer, flush func()) {
	return stderr, func() {}
}
