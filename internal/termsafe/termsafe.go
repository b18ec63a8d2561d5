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
	"strconv"
	"strings"
	"unicode/utf8"
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
	for i := 0; i < len(s); {
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
