//go:build unix

package cmd

import (
	"io"
	"os"
	"syscall"
)

// journalStderr returns stderr wrapped in a journalWriter when
// JOURNAL_STREAM (getenv) says it is connected to systemd's journal, and
// a function that writes what the wrapper still holds; stderr itself and
// a no-op otherwise.
func journalStderr(stderr *os.File, getenv func(string) string) (w io.Writer, flush func()) {
	journal := getenv("JOURNAL_STREAM")
	if journal == "" {
		return stderr, func() {}
	}
	st, err := stderr.Stat()
	if err != nil {
		return stderr, func() {}
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || !isJournalStream(journal, uint64(sys.Dev), uint64(sys.Ino)) {
		return stderr, func() {}
	}
	j := &journalWriter{w: stderr}
	return j, func() { j.Flush() }
}
