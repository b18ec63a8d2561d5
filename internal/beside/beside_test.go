package beside

import (
	"bytes"
	"testing"
)

// TestWriter writes in pieces of every size, from one byte to several
// chunks, through each method, and checks that the consumer got every
// byte in order in chunks of the size asked (the last shorter), none kept
// beyond the call.
func TestWriter(t *testing.T) {
	const size = 1000
	data := make([]byte, 7*size+123)
	for i := range data {
		data[i] = byte(i * 7)
	}
	var got bytes.Buffer
	var sizes []int
	w := New(size, func(c []byte) {
		got.Write(c)
		sizes = append(sizes, len(c))
	})
	rest, n := data, 1
	for k := 0; len(rest) > 0; k, n = k+1, n*3+1 {
		m := min(n, len(rest))
		switch k % 3 {
		case 0:
			w.Write(rest[:m])
		case 1:
			w.WriteString(string(rest[:m]))
		default:
			for _, c := range rest[:m] {
				w.WriteByte(c)
			}
		}
		rest = rest[m:]
	}
	w.Close()
	w.Close()
	if !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("the consumer got %d bytes, not the %d written in order", got.Len(), len(data))
	}
	for i, s := range sizes {
		if s != size && i != len(sizes)-1 || s > size {
			t.Fatalf("chunk %d of %d bytes, want %d", i, s, size)
		}
	}
}

// TestCloseWrite: CloseWrite hands the last bytes over and returns while
// the consumer is still busy; Close then waits for it.
func TestCloseWrite(t *testing.T) {
	release := make(chan struct{})
	var got bytes.Buffer
	w := New(4, func(c []byte) {
		<-release
		got.Write(c)
	})
	w.WriteString("abcdefghij") // two chunks handed over, two bytes kept
	w.CloseWrite()
	w.CloseWrite()
	close(release)
	w.Close()
	if got.String() != "abcdefghij" {
		t.Fatalf("consumer got %q", got.String())
	}
}
