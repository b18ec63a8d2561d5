package cmd

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/objgc/objgc/destroy"
)

// TestInterruptibleReader: what r holds comes through whole; a read that
// waits ends with ErrInterrupted when done closes, and so does every read
// after it.
func TestInterruptibleReader(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 100_000)
	got, err := io.ReadAll(interruptible(bytes.NewReader(data), make(chan struct{})))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, %v; want %d", len(got), err, len(data))
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	done := make(chan struct{})
	r := interruptible(pr, done)
	go func() { pw.Write([]byte("abc")) }()
	buf := make([]byte, 10)
	if n, err := r.Read(buf); n != 3 || err != nil {
		t.Fatalf("first read: %d, %v", n, err)
	}
	close(done)
	for range 2 {
		if _, err := r.Read(buf); !errors.Is(err, destroy.ErrInterrupted) {
			t.Fatalf("read after the interrupt: %v", err)
		}
	}
}
