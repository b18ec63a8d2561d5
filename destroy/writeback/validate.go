package writeback

import (
	"github.com/objgc/objgc/internal/beside"
	"github.com/objgc/objgc/internal/jsonedit"
)

// asyncValidator checks the bytes written to it with a jsonedit.Validator
// beside the writing (beside.Writer), so that the write-back's check of
// what it writes does not run inside it (the check was a tenth of an
// apply's CPU on the 1M model). Err waits for every byte to be checked.
type asyncValidator struct {
	v jsonedit.Validator
	*beside.Writer
}

// validateChunk is the size of the chunks handed to the checking goroutine.
const validateChunk = 256 << 10

func newAsyncValidator() *asyncValidator {
	a := &asyncValidator{}
	a.Writer = beside.New(validateChunk, func(c []byte) { a.v.Write(c) })
	return a
}

// Err returns the Validator's verdict on all that was written
// (jsonedit.Validator.Err) once it has checked it. The validator takes no
// more writes after it.
func (a *asyncValidator) Err() error {
	a.Close()
	return a.v.Err()
}
