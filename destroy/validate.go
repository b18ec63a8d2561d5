package destroy

import "github.com/objgc/objgc/internal/jsonedit"

// asyncValidator checks the bytes written to it with a jsonedit.Validator
// on a goroutine of its own, a chunk at a time, so that the write-back's
// check of what it writes runs beside the writing instead of inside it
// (the check was a tenth of an apply's CPU on the 1M model). Err waits for
// every byte to be checked.
type asyncValidator struct {
	v     jsonedit.Validator
	cur   []byte
	full  chan []byte // chunks to check, in order
	free  chan []byte // chunks checked, for reuse
	done  chan struct{}
	ended bool
}

// validateChunk is the size of the chunks handed to the checking goroutine.
const validateChunk = 256 << 10

func newAsyncValidator() *asyncValidator {
	a := &asyncValidator{full: make(chan []byte, 4), free: make(chan []byte, 6), done: make(chan struct{})}
	for range cap(a.free) {
		a.free <- make([]byte, 0, validateChunk)
	}
	a.cur = <-a.free
	go func() {
		defer close(a.done)
		for c := range a.full {
			a.v.Write(c)
			a.free <- c[:0]
		}
	}()
	return a
}

func (a *asyncValidator) add(p []byte)       { addPieces(a, p) }
func (a *asyncValidator) addString(s string) { addPieces(a, s) }

// addPieces copies p into the chunks handed to the checking goroutine.
func addPieces[T []byte | string](a *asyncValidator, p T) {
	for len(p) > 0 {
		n := min(len(p), validateChunk-len(a.cur))
		a.cur = append(a.cur, p[:n]...)
		p = p[n:]
		a.flushIfFull()
	}
}

func (a *asyncValidator) addByte(b byte) {
	a.cur = append(a.cur, b)
	a.flushIfFull()
}

func (a *asyncValidator) flushIfFull() {
	if len(a.cur) == validateChunk {
		a.full <- a.cur
		a.cur = <-a.free
	}
}

// Err checks what is left and returns the Validator's verdict on all that
// was written (jsonedit.Validator.Err). The validator takes no more
// writes after it.
func (a *asyncValidator) Err() error {
	if !a.ended {
		a.ended = true
		if len(a.cur) > 0 {
			a.full <- a.cur
		}
		close(a.full)
		<-a.done
	}
	return a.v.Err()
}
