package cmd

import (
	"fmt"
	"io"

	"github.com/objgc/objgc/destroy"
)

// interruptibleReader reads r on a goroutine of its own, so that a Read
// waiting for input (standard input from a pipe whose writer says
// nothing) returns an error wrapping destroy.ErrInterrupted as soon as
// done is closed: apply reads standard input while it holds the lock, and
// the first SIGINT or SIGTERM must end that wait as it ends every other.
// The read left waiting is abandoned with the process.
type interruptibleReader struct {
	r    io.Reader
	done <-chan struct{}
	res  chan readResult
	buf  []byte
	busy bool // a read of buf is under way
}

type readResult struct {
	n   int
	err error
}

// interruptible returns r read so (r itself when done is nil: never).
func interruptible(r io.Reader, done <-chan struct{}) io.Reader {
	if done == nil || r == nil {
		return r
	}
	return &interruptibleReader{r: r, done: done, res: make(chan readResult, 1)}
}

func (ir *interruptibleReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if ir.busy {
		// Only an interrupt leaves a read under way: it stays so.
		return 0, fmt.Errorf("%w; nothing was done", destroy.ErrInterrupted)
	}
	if cap(ir.buf) < len(p) {
		ir.buf = make([]byte, len(p))
	}
	buf := ir.buf[:len(p)]
	ir.busy = true
	go func() {
		n, err := ir.r.Read(buf)
		ir.res <- readResult{n, err}
	}()
	select {
	case res := <-ir.res:
		ir.busy = false
		n := copy(p, ir.buf[:res.n])
		return n, res.err
	case <-ir.done:
		return 0, fmt.Errorf("%w; nothing was done", destroy.ErrInterrupted)
	}
}
