package swar

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// first is the place of the first byte of w that match says matches, 8
// for none: the answer each test must give.
func first(w [8]byte, match func(byte) bool) int {
	for i, b := range w {
		if match(b) {
			return i
		}
	}
	return 8
}

// place is where a test's result puts the first match, 8 for none.
func place(m uint64) int {
	if m == 0 {
		return 8
	}
	return bits.TrailingZeros64(m) / 8
}

// words are the eight-byte words the tests are checked on: every byte
// value in every place among bytes that match nothing, the bytes next to
// the limits in pairs, and random words.
func words() [][8]byte {
	var ws [][8]byte
	for p := range 8 {
		for b := range 256 {
			w := [8]byte{'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a'}
			w[p] = byte(b)
			ws = append(ws, w)
		}
	}
	edges := []byte{0, 1, 0x1f, 0x20, 0x21, '"', '\\', 0x7e, 0x7f, 0x80, 0xfe, 0xff}
	for _, a := range edges {
		for _, b := range edges {
			for p := range 7 {
				w := [8]byte{'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a'}
				w[p], w[p+1] = a, b
				ws = append(ws, w)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		ws = append(ws, w)
	}
	return ws
}

// TestFirstMatch: each test finds the first byte that matches, and finds
// none where none does; HasAbove may also flag a word whose only byte
// above is 0xff's carry, never miss one.
func TestFirstMatch(t *testing.T) {
	for _, w := range words() {
		x := binary.LittleEndian.Uint64(w[:])
		for _, n := range []byte{1, 0x20, 0x7f, 0x80} {
			if got, want := place(HasLess(x, n)), first(w, func(b byte) bool { return b < n }); got != want {
				t.Fatalf("HasLess(% x, %#x): first at %d, want %d", w, n, got, want)
			}
		}
		for _, c := range []byte{0, '"', '\\', 0x7f, 0xff} {
			if got, want := place(HasByte(x, c)), first(w, func(b byte) bool { return b == c }); got != want {
				t.Fatalf("HasByte(% x, %q): first at %d, want %d", w, c, got, want)
			}
		}
		if got, want := place(HasAbove(x)), first(w, func(b byte) bool { return b >= 0x7f }); got != want {
			t.Fatalf("HasAbove(% x): first at %d, want %d", w, got, want)
		}
	}
}

// TestLoad8 reads the bytes of a string as binary.LittleEndian reads them.
func TestLoad8(t *testing.T) {
	s := "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09"
	for i := 0; i+8 <= len(s); i++ {
		if got, want := Load8(s, i), binary.LittleEndian.Uint64([]byte(s[i:])); got != want {
			t.Errorf("Load8(s, %d) = %#x, want %#x", i, got, want)
		}
	}
}
