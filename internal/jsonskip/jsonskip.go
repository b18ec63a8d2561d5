// Package jsonskip moves over the parts of a JSON document that the
// snapshot reader has already validated: white space, a string, a whole
// value. It is for going back into validated bytes (to name a JSON path,
// to rewrite a member in place); it checks nothing, and on input that is
// not valid JSON its offsets mean nothing.
package jsonskip

// WS returns the offset of the first byte at or after pos that is not
// JSON white space (space, tab, line feed, carriage return), or len(data).
func WS(data []byte, pos int) int {
	for pos < len(data) {
		switch data[pos] {
		case ' ', '\t', '\n', '\r':
			pos++
		default:
			return pos
		}
	}
	return pos
}

// String returns the offset just past the string whose opening quote is
// at pos.
func String(data []byte, pos int) int {
	for pos++; pos < len(data); pos++ {
		switch data[pos] {
		case '\\':
			pos++
		case '"':
			return pos + 1
		}
	}
	return pos
}

// Value returns the offset just past the JSON value that starts at pos: a
// string, an object or array with everything in it, or a number or
// literal (which ends at the first ',', '}', ']', ':' or white space).
func Value(data []byte, pos int) int {
	depth := 0
	for pos < len(data) {
		switch data[pos] {
		case '"':
			pos = String(data, pos)
			if depth == 0 {
				return pos
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return pos
			}
			depth--
			if depth == 0 {
				return pos + 1
			}
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return pos
			}
		}
		pos++
	}
	return pos
}
