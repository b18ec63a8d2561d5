package writeback

import (
	"bufio"
	"fmt"
	"io"

	"github.com/objgc/objgc/internal/jsonedit"
)

// Model is the model Build decided on, written by WriteTo
// and WriteNested. Its three values are not held in memory: they are
// written piece by piece from the input's bytes and the edits, unchanged
// regions copied in document order (see Build for what is held).
type Model struct {
	objects, objectsCopy, attributes func(w jsonedit.Writer) error
}

// WriteTo writes the envelope to w, then a newline.
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	cw := newCountWriter(w)
	m.writeNested(cw, "")
	cw.WriteByte('\n')
	return cw.finish()
}

// WriteNested writes the envelope as the value of a member whose line is
// indented by indent (an engine task's "model"): the layout of WriteTo
// with indent before each key and the closing brace, and no final
// newline.
func (m *Model) WriteNested(w io.Writer, indent string) (int64, error) {
	cw := newCountWriter(w)
	m.writeNested(cw, indent)
	return cw.finish()
}

func (m *Model) writeNested(w *countWriter, indent string) {
	key := func(name string) { w.WriteString("\n" + indent + "  \"" + name + "\": ") }
	w.WriteByte('{')
	// Each value is checked on a goroutine of its own, and the verdicts
	// are taken once all are written: the check of one value goes on
	// while the next is written (the checks are the slower half of the
	// writing). A value found broken still fails the write
	// before anything is committed.
	type checked struct {
		name  string
		valid *asyncValidator
	}
	var checks []checked
	for k, part := range []struct {
		name  string
		write func(jsonedit.Writer) error
	}{{"Objects", m.objects}, {"ObjectsCopy", m.objectsCopy}, {"Attributes", m.attributes}} {
		if k > 0 {
			w.WriteByte(',')
		}
		key(part.name)
		if w.err == nil {
			w.valid = newAsyncValidator()
			checks = append(checks, checked{part.name, w.valid})
			if err := part.write(w); err != nil && w.err == nil {
				w.err = err
			}
			w.valid.CloseWrite()
			w.valid = nil
		}
	}
	for _, c := range checks {
		if err := c.valid.Err(); err != nil && w.err == nil {
			w.err = fmt.Errorf("write-back: internal error: the %s value written is %w", c.name, err)
		}
	}
	w.WriteString("\n" + indent + "}")
}

// countWriter is the jsonedit.Writer the values are written to: w itself
// when it is one (the *bufio.Writer of an atomic write), else w behind a
// buffer; it counts the bytes and keeps the first error, after which it
// writes nothing more.
type countWriter struct {
	w     jsonedit.Writer
	buf   *bufio.Writer // nil when w is the caller's own
	n     int64
	err   error
	valid *asyncValidator // when not nil, checks what is written
}

func newCountWriter(w io.Writer) *countWriter {
	if jw, ok := w.(jsonedit.Writer); ok {
		return &countWriter{w: jw}
	}
	buf := bufio.NewWriterSize(w, 64<<10)
	return &countWriter{w: buf, buf: buf}
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.valid != nil {
		c.valid.Write(p)
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

func (c *countWriter) WriteString(s string) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.valid != nil {
		c.valid.WriteString(s)
	}
	n, err := c.w.WriteString(s)
	c.n += int64(n)
	c.err = err
	return n, err
}

func (c *countWriter) WriteByte(b byte) error {
	if c.err != nil {
		return c.err
	}
	if c.valid != nil {
		c.valid.WriteByte(b)
	}
	c.err = c.w.WriteByte(b)
	if c.err == nil {
		c.n++
	}
	return c.err
}

func (c *countWriter) finish() (int64, error) {
	if c.err == nil && c.buf != nil {
		c.err = c.buf.Flush()
	}
	return c.n, c.err
}
