package cmd

import (
	"bytes"
	"io"
	"strconv"
	"strings"
)

// journalWriter writes objgc's stderr to systemd's journal with each
// line's priority in front of it, as sd-daemon(3) defines the prefixes
// and journald reads them by default (SyslogLevelPrefix=yes): so that
// `journalctl -p err` finds objgc's errors, which would otherwise all be
// logged at the stream's default priority, info. A line's priority
// follows objgc's wording (linePriority). Lines are written whole; Flush
// writes a last line without its newline.
type journalWriter struct {
	w    io.Writer
	line []byte
}

func (j *journalWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			j.line = append(j.line, b...)
			break
		}
		j.line = append(j.line, b[:i+1]...)
		b = b[i+1:]
		if err := j.Flush(); err != nil {
			return n - len(b), err
		}
	}
	return n, nil
}

// Flush writes what is buffered, a line or the start of one.
func (j *journalWriter) Flush() error {
	if len(j.line) == 0 {
		return nil
	}
	line := j.line
	j.line = j.line[:0]
	_, err := io.WriteString(j.w, linePriority(string(line))+string(line))
	return err
}

// The sd-daemon(3) prefixes: syslog(3)'s priorities in angle brackets.
const (
	sdErr     = "<3>"
	sdWarning = "<4>"
	sdNotice  = "<5>"
)

// linePriority is the sd-daemon prefix of a line objgc writes to stderr:
// "objgc: warning: ..." (and a report's "warning: ...") a warning,
// "objgc: note: ..." a notice, any other "objgc: ..." line an error
// (every error objgc prints starts so), the rest none (journald's
// default, info: progress and reports).
func linePriority(line string) string {
	switch {
	case strings.HasPrefix(line, "objgc: warning:"), strings.HasPrefix(line, "warning:"):
		return sdWarning
	case strings.HasPrefix(line, "objgc: note:"):
		return sdNotice
	case strings.HasPrefix(line, "objgc: "):
		return sdErr
	}
	return ""
}

// isJournalStream reports whether JOURNAL_STREAM (journal, "DEV:INODE",
// which systemd sets for a service whose stdout or stderr goes to the
// journal) names the file whose device and inode are dev and ino: the
// variable is inherited by children whose stderr may go elsewhere, so
// systemd.exec(5) says to compare it with the stream.
func isJournalStream(journal string, dev, ino uint64) bool {
	d, i, ok := strings.Cut(journal, ":")
	if !ok {
		return false
	}
	jd, err1 := strconv.ParseUint(d, 10, 64)
	ji, err2 := strconv.ParseUint(i, 10, 64)
	return err1 == nil && err2 == nil && jd == dev && ji == ino
}
