// Package swar tests eight bytes at a time (SIMD within a register), for
// the loops that skip plain bytes: the model reader's strings, the JSON
// validator, the plan encoder and the terminal escaper. Each test is
// non-zero when some byte of x matches, and its lowest set bit (0x80 of a
// byte) is always that of the first byte that matches, so that
// bits.TrailingZeros64/8 is its place (borrows and carries run upward).
// The words are little-endian (Load8, binary.LittleEndian), so that the
// first byte is the lowest.
package swar

const lo8, hi8 = 0x0101010101010101, 0x8080808080808080

// HasLess is non-zero when some byte of x is below n (n <= 128): the
// classic SWAR test (Hacker's Delight, 6-1).
func HasLess(x uint64, n byte) uint64 { return (x - lo8*uint64(n)) &^ x & hi8 }

// HasAbove is non-zero when some byte of x is 0x7f or above. It may also
// be non-zero when none is (a carry out of a byte 0xff, which is itself
// above), never the other way round.
func HasAbove(x uint64) uint64 { return (x + lo8 | x) & hi8 }

// HasByte is non-zero when some byte of x equals c.
func HasByte(x uint64, c byte) uint64 { return HasLess(x^(lo8*uint64(c)), 1) }

// Load8 returns the eight bytes of s from i, little-endian (i+8 <=
// len(s)), for the tests above on a string.
func Load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
