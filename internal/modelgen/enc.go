package modelgen

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// spaces is enough indentation for any depth the generator produces; enc.nl
// slices it.
var spaces = strings.Repeat(" ", 256)

// enc is a minimal streaming JSON emitter. It appends to its own chunk
// buffer, hands full chunks to a bufio.Writer (see chunk), keeps only a stack
// of element counts, and never escapes
// strings: every string the generator emits is plain printable ASCII without
// quotes or backslashes (checked by the tests through encoding/json).
//
// Pretty output uses two-space indentation and `"key": value`, empty
// containers stay `[]` / `{}`; compact output has no whitespace at all.
type enc struct {
	w       *bufio.Writer
	b       []byte // pending output, handed to w by chunk and flush
	err     error  // first write error
	indent  bool
	cnt     []int32 // elements written so far in each open container
	objects int     // "?" headers written
}

func newEnc(w io.Writer, indent bool) *enc {
	return &enc{
		w:      bufio.NewWriterSize(w, 256<<10),
		indent: indent,
		cnt:    make([]int32, 0, 32),
		b:      make([]byte, 0, chunkSize+64<<10),
	}
}

const chunkSize = 128 << 10

// chunk passes the pending output on once it is large; the generator calls
// it between applications, so the buffer stays bounded by chunkSize plus
// one application.
func (e *enc) chunk() {
	if len(e.b) >= chunkSize {
		if _, err := e.w.Write(e.b); err != nil && e.err == nil {
			e.err = err
		}
		e.b = e.b[:0]
	}
}

// flush writes everything out and reports the first write error.
func (e *enc) flush() error {
	if e.err != nil {
		return e.err
	}
	if _, err := e.w.Write(e.b); err != nil {
		return err
	}
	e.b = e.b[:0]
	return e.w.Flush()
}

func (e *enc) nl() {
	if !e.indent {
		return
	}
	n := 2 * len(e.cnt)
	e.b = append(e.b, '\n')
	for n > len(spaces) { // deeper than the generator ever goes
		e.b = append(e.b, spaces...)
		n -= len(spaces)
	}
	e.b = append(e.b, spaces[:n]...)
}

// sep starts a new member of the innermost open container.
func (e *enc) sep() {
	top := &e.cnt[len(e.cnt)-1]
	if *top > 0 {
		e.b = append(e.b, ',')
	}
	*top++
	e.nl()
}

// key starts the member k of the innermost object.
func (e *enc) key(k string) {
	e.sep()
	e.b = append(e.b, '"')
	e.b = append(e.b, k...)
	if e.indent {
		e.b = append(e.b, `": `...)
	} else {
		e.b = append(e.b, `":`...)
	}
}

// item starts the next element of the innermost array.
func (e *enc) item() { e.sep() }

func (e *enc) beginObj() { e.b = append(e.b, '{'); e.cnt = append(e.cnt, 0) }
func (e *enc) beginArr() { e.b = append(e.b, '['); e.cnt = append(e.cnt, 0) }
func (e *enc) endObj()   { e.end('}') }
func (e *enc) endArr()   { e.end(']') }

func (e *enc) end(c byte) {
	n := e.cnt[len(e.cnt)-1]
	e.cnt = e.cnt[:len(e.cnt)-1]
	if n > 0 {
		e.nl()
	}
	e.b = append(e.b, c)
}

func (e *enc) str(s string) {
	e.b = append(e.b, '"')
	e.b = append(e.b, s...)
	e.b = append(e.b, '"')
}

// strBytes writes b as a JSON string (b must need no escaping).
func (e *enc) strBytes(b []byte) {
	e.b = append(e.b, '"')
	e.b = append(e.b, b...)
	e.b = append(e.b, '"')
}

func (e *enc) null() { e.b = append(e.b, "null"...) }

func (e *enc) boolean(b bool) {
	if b {
		e.b = append(e.b, "true"...)
	} else {
		e.b = append(e.b, "false"...)
	}
}

func (e *enc) int(n int) {
	e.b = strconv.AppendInt(e.b, int64(n), 10)
}

func (e *enc) id(x ID) {
	e.b = append(e.b, '"')
	e.b = x.appendHex(e.b)
	e.b = append(e.b, '"')
}

// Convenience members.
func (e *enc) kStr(k, v string) { e.key(k); e.str(v) }
func (e *enc) kNull(k string)   { e.key(k); e.null() }
func (e *enc) kBool(k string, v bool) {
	e.key(k)
	e.boolean(v)
}
func (e *enc) kInt(k string, v int) { e.key(k); e.int(v) }
func (e *enc) kID(k string, v ID)   { e.key(k); e.id(v) }
