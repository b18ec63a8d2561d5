package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/objgc/objgc/internal/jsonedit"
	"github.com/objgc/objgc/internal/termsafe"
)

// limitedBuffer keeps the first max bytes written to it and counts the
// rest. It never fails a write: the hook is not disturbed (no EPIPE) by
// writing too much, it fails once it has finished.
type limitedBuffer struct {
	buf     bytes.Buffer
	max     int64
	written int64
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.written += int64(len(p))
	if room := b.max - int64(b.buf.Len()); room > 0 {
		b.buf.Write(p[:min(int64(len(p)), room)])
	}
	return len(p), nil
}

func (b *limitedBuffer) overflow() bool { return b.written > b.max }

const (
	// tailSize is how much of the end of stderr is kept for the report.
	tailSize = 4 << 10
	// maxLine bounds the line handed to the callback; a longer line is
	// delivered in pieces of this size.
	maxLine = 64 << 10
)

// lineWriter splits what the hook writes to stderr into lines for the
// callback and keeps the last tailSize bytes. os/exec writes to it from a
// single goroutine, so it needs no lock.
type lineWriter struct {
	fn   func(line string)
	line []byte
	tail []byte
	cut  bool // tail lost bytes from its start
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.tail = append(w.tail, p...)
	if len(w.tail) > 2*tailSize {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-tailSize:]...)
		w.cut = true
	}
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			w.line = append(w.line, rest...)
			for len(w.line) >= maxLine {
				w.emit(w.line[:maxLine])
				w.line = append(w.line[:0], w.line[maxLine:]...)
			}
			break
		}
		w.line = append(w.line, rest[:i]...)
		rest = rest[i+1:]
		w.emit(w.line)
		w.line = w.line[:0]
	}
	return len(p), nil
}

// emit hands on one line, escaped for a terminal or a log
// (termsafe.String): a hook's ESC, CR or invalid UTF-8 is shown, never
// obeyed, and cannot forge a line of objgc's own.
func (w *lineWriter) emit(line []byte) {
	if w.fn != nil {
		w.fn(termsafe.String(string(bytes.TrimSuffix(line, []byte("\r")))))
	}
}

// flush delivers a last line that did not end in a newline.
func (w *lineWriter) flush() {
	if len(w.line) > 0 {
		w.emit(w.line)
		w.line = w.line[:0]
	}
}

// Tail returns the last tailSize bytes of stderr, starting at a line
// boundary when earlier bytes were dropped.
func (w *lineWriter) Tail() string {
	t, cut := w.tail, w.cut
	if len(t) > tailSize {
		t, cut = t[len(t)-tailSize:], true
	}
	if cut {
		if i := bytes.IndexByte(t, '\n'); i >= 0 && i < len(t)-1 {
			t = t[i+1:]
		}
	}
	return string(t)
}

// errPatchNotNotify is wrapped when a destroy hook writes a "patch".
var errPatchNotNotify = errors.New(`only notify hooks may write a "patch"`)

// parseStdout checks the rule of docs/hooks.md, "What a hook answers": stdout is empty (JSON
// whitespace only) or exactly one JSON object. It returns the object (nil
// for empty stdout) and its "patch" member (nil when absent or null).
func parseStdout(out []byte, notify bool) (obj, patch json.RawMessage, reason string, err error) {
	trimmed := bytes.Trim(out, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, nil, "", nil
	}
	if trimmed[0] != '{' {
		err = fmt.Errorf("starts with %q", firstRunes(trimmed, 16))
		return nil, nil, "stdout is not a JSON object: " + err.Error(), err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &members); err != nil {
		return nil, nil, "stdout is not a JSON object: " + err.Error(), err
	}
	// encoding/json kept the last of a key written twice, as Python does;
	// the patch merge and a reader of the report might keep another.
	if path, k, dup := jsonedit.DuplicateKey(trimmed); dup {
		err = fmt.Errorf("duplicate key %s at %s: write each key of an object once", strconv.Quote(k), path)
		return nil, nil, "stdout: " + err.Error(), err
	}
	p, ok := members["patch"]
	if !ok || string(p) == "null" {
		return trimmed, nil, "", nil
	}
	if !notify {
		return nil, nil, "stdout: " + errPatchNotNotify.Error(), errPatchNotNotify
	}
	if p[0] != '{' {
		err = fmt.Errorf(`"patch" is %s, not a JSON object (RFC 7386 merge patch for the subscriber)`, firstRunes(p, 16))
		return nil, nil, "stdout: " + err.Error(), err
	}
	return trimmed, p, "", nil
}

func firstRunes(b []byte, n int) string {
	r := []rune(string(b))
	if len(r) > n {
		return string(r[:n]) + "..."
	}
	return string(r)
}

// readBufs holds the buffers drain reads into: a hook run would otherwise
// allocate two.
var readBufs = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// drain copies r to w until end of file or an error, and returns the
// error, nil at end of file. w never fails.
func drain(r *os.File, w io.Writer) error {
	buf := readBufs.Get().(*[32 << 10]byte)
	defer readBufs.Put(buf)
	for {
		n, err := r.Read(buf[:])
		if n > 0 {
			_, _ = w.Write(buf[:n])
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// stopReading ends the reads of files at deadline: a read deadline, or
// where the files do not support one, closing them then.
func stopReading(deadline time.Time, files ...*os.File) {
	for _, f := range files {
		if f.SetReadDeadline(deadline) != nil {
			time.AfterFunc(time.Until(deadline), func() { f.Close() })
		}
	}
}
