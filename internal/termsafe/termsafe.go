// Package termsafe makes text from outside objgc (ids, type strings and
// handler names from a model, lines a hook wrote to stderr, file names from
// a package) safe to print on a terminal or into a log.
//
// A string that holds only printable characters is printed as it is, so
// that ordinary output stays readable. A string that holds anything else (a
// control character such as ESC, BEL, CR or LF, a C1 control, a line or
// paragraph separator, a bidirectional override, any other rune that
// strconv.IsPrint rejects, or bytes that are not UTF-8) is printed as a Go
// string literal, as strconv.Quote writes it: the reader sees, escaped,
// exactly what the bytes are, and the terminal interprets none of them.
package termsafe

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/objgc/objgc/internal/swar"
)

// String returns s unchanged when it is safe to print: valid UTF-8, every
// rune printable (strconv.IsPrint) or a space or a tab, and not beginning
// with a double quote (so that a quoted string and a plain one are never
// confused). Otherwise it returns strconv.Quote(s).
func String(s string) string {
	if Safe(s) {
		return s
	}
	return strconv.Quote(s)
}

// Safe reports whether String returns s unchanged.
func Safe(s string) bool {
	if s != "" && s[0] == '"' {
		return false
	}
	return Printable(s)
}

// Line returns s unchanged when Printable(s), else strconv.Quote(s): for a
// whole message (an error, a log line) that holds strings from outside,
// some of them already quoted by String. A line break or an escape
// anywhere in it quotes all of it, so that it stays one line and the
// terminal obeys none of it; a message beginning with a quoted name is
// not quoted again.
func Line(s string) string {
	if Printable(s) {
		return s
	}
	return strconv.Quote(s)
}

// Printable reports whether s is valid UTF-8 of printable runes
// (strconv.IsPrint), spaces and tabs only: Safe without its rule about a
// leading double quote.
func Printable(s string) bool {
	for i := 0; i < len(s); {
		// Eight printable ASCII bytes at a time: ids, types and paths
		// are, and a text plan reads every one.
		for i+8 <= len(s) {
			x := swar.Load8(s, i)
			if swar.HasLess(x, 0x20)|swar.HasAbove(x) != 0 {
				break
			}
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			// Printable ASCII and tab; DEL and the other C0 controls are not.
			if c < 0x20 && c != '\t' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !strconv.IsPrint(r) {
			return false
		}
		i += n
	}
	return true
}

// Lines applies String to each line of a text of several lines (separated
// by "\n"), keeping the line breaks: for messages that list one item a
// line.
func Lines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = String(l)
	}
	return strings.Join(lines, "\n")
}

// JSON returns the JSON text b with every unprintable non-ASCII rune
// (strconv.IsPrint false: a C1 control, a bidirectional override, a line
// separator, a no-break space...) written as a \u escape, a surrogate pair
// above U+FFFF (RFC 8259 section 7). The text means the same to any JSON
// reader, and printed on a terminal it reorders or hides nothing.
// encoding/json already escapes the other ASCII controls (not DEL) and
// writes valid UTF-8, and DEL and non-ASCII can only occur inside strings,
// so b must come from it.
// b is returned as is when it holds nothing to escape.
func JSON(b []byte) []byte {
	i := 0
	for i < len(b) {
		// Eight plain ASCII bytes at a time: a JSON plan is almost all
		// of them, and this pass reads all of it.
		for i+8 <= len(b) && swar.HasAbove(binary.LittleEndian.Uint64(b[i:])) == 0 {
			i += 8
		}
		if i == len(b) {
			break
		}
		if b[i] < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError && strconv.IsPrint(r) {
			i += n
			continue
		}
		break
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		if b[i] < 0x7f {
			out = append(out, b[i])
			i++
			continue
		}
		// A stray byte (not from encoding/json) decodes as U+FFFD and is
		// written as its escape: never passed on.
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 || !strconv.IsPrint(r) {
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
			} else {
				out = fmt.Appendf(out, `\u%04x`, r)
			}
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}
