package cmd

import (
	"bytes"
	"io"
	"runtime"

	"github.com/objgc/objgc/snapshot"
)

// renderChunk is how many items renderOrdered hands a worker at a time.
const renderChunk = 256

// renderOrdered writes to w what render writes for each item 0 to n-1, in
// that order, rendering them on as many goroutines as the process has
// processors, a chunk of items at a time. A plan of a hundred thousand
// doomed objects spends most of its writing time rendering each object's
// path, reasons and hooks; the items are independent. At most a few chunks
// wait to be written, so memory stays bounded whatever n, and their buffers
// are used again: a fresh buffer a chunk, grown from nothing, would be
// garbage in proportion to the plan, which would set the height of its heap.
// render must be safe to call from several goroutines at once; it may read
// the documents docs, each worker under snapshot.Protect. The first error,
// of a write or a fault, is returned.
func renderOrdered(w io.Writer, docs []*snapshot.Document, n int, render func(b *bytes.Buffer, i int)) error {
	workers := runtime.GOMAXPROCS(0)
	if n <= renderChunk || workers < 2 {
		var b bytes.Buffer
		var err error
		for i := range n {
			render(&b, i)
			if b.Len() >= 64<<10 || i == n-1 {
				if err == nil {
					_, err = w.Write(b.Bytes())
				}
				b.Reset()
			}
		}
		return err
	}
	type chunk struct {
		lo, hi int
		b      *bytes.Buffer
		err    error // a fault reading a mapped model (snapshot.Protect)
		done   chan struct{}
	}
	jobs := make(chan *chunk, workers)
	order := make(chan *chunk, 2*workers) // bounds the chunks under way
	// Buffers written out come back here; at most 3*workers+2 chunks
	// exist at once (order's, jobs', one the writer holds and one
	// waiting to be queued).
	free := make(chan *bytes.Buffer, 3*workers+2)
	go func() {
		for lo := 0; lo < n; lo += renderChunk {
			c := &chunk{lo: lo, hi: min(lo+renderChunk, n), done: make(chan struct{})}
			select {
			case c.b = <-free:
			default:
				c.b = new(bytes.Buffer)
			}
			order <- c
			jobs <- c
		}
		close(jobs)
		close(order)
	}()
	for range workers {
		go func() {
			for c := range jobs {
				c.err = renderChunkOf(c.b, c.lo, c.hi, docs, render)
				close(c.done)
			}
		}()
	}
	var err error
	for c := range order {
		<-c.done
		if err == nil {
			err = c.err
		}
		if err == nil {
			_, err = w.Write(c.b.Bytes())
		}
		c.b.Reset()
		select {
		case free <- c.b:
		default:
		}
	}
	return err
}

// renderChunkOf renders items lo to hi-1 into b; a fault reading a mapped
// document of docs is its error.
func renderChunkOf(b *bytes.Buffer, lo, hi int, docs []*snapshot.Document, render func(b *bytes.Buffer, i int)) (err error) {
	defer snapshot.Protect(&err, func() []*snapshot.Document { return docs })()
	for i := lo; i < hi; i++ {
		render(b, i)
	}
	return nil
}
