// Package beside hands the bytes written to it to a consumer running on a
// goroutine of its own, a bounded chunk at a time, so that work on a
// stream (a check, a hash) runs beside the writing of it instead of
// inside it.
package beside

// Writer copies what is written to it into chunks of a fixed size and
// hands each full chunk, in order, to the consumer given to New, which
// runs on a goroutine of its own. A few chunks are under way at most, so
// that memory stays bounded however much is written and however large one
// Write is (a tree of a mapped model is written whole). Close hands over
// the rest and waits for the consumer. A Writer is for one goroutine.
type Writer struct {
	size   int
	cur    []byte
	full   chan []byte // chunks for the consumer, in order
	free   chan []byte // chunks consumed, for reuse
	done   chan struct{}
	closed bool
}

// New starts consume, which is given each chunk of size bytes (the last
// may be shorter) and must not keep it.
func New(size int, consume func([]byte)) *Writer {
	w := &Writer{size: size, full: make(chan []byte, 2), free: make(chan []byte, 4), done: make(chan struct{})}
	for range cap(w.free) {
		w.free <- make([]byte, 0, size)
	}
	w.cur = <-w.free
	go func() {
		defer close(w.done)
		for c := range w.full {
			consume(c)
			w.free <- c[:0]
		}
	}()
	return w
}

// Write copies p; it never fails.
func (w *Writer) Write(p []byte) (int, error) {
	add(w, p)
	return len(p), nil
}

// WriteString copies s; it never fails.
func (w *Writer) WriteString(s string) (int, error) {
	add(w, s)
	return len(s), nil
}

// WriteByte copies c; it never fails.
func (w *Writer) WriteByte(c byte) error {
	w.cur = append(w.cur, c)
	w.handOver()
	return nil
}

func add[T []byte | string](w *Writer, p T) {
	for len(p) > 0 {
		n := min(len(p), w.size-len(w.cur))
		w.cur = append(w.cur, p[:n]...)
		p = p[n:]
		w.handOver()
	}
}

// handOver hands the current chunk over when it is full.
func (w *Writer) handOver() {
	if len(w.cur) == w.size {
		w.full <- w.cur
		w.cur = <-w.free
	}
}

// Close hands over what is left and returns once the consumer has had
// every byte. Nothing may be written after it; it may be called again.
func (w *Writer) Close() {
	w.CloseWrite()
	<-w.done
}

// CloseWrite hands over what is left and returns at once: the consumer
// goes on with it on its own (Close waits for it). Nothing may be
// written after it; it may be called again.
func (w *Writer) CloseWrite() {
	if w.closed {
		return
	}
	w.closed = true
	if len(w.cur) > 0 {
		w.full <- w.cur
	}
	close(w.full)
}
