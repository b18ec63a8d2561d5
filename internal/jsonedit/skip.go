// Package jsonedit reads and edits JSON documents that the snapshot
// reader has already validated, keeping every byte it does not change.
//
// WS, String and Value move over the parts of such a document: white
// space, a string, a whole value. Members lists an object's members or an
// array's elements, Rewriter writes a document with edits at chosen
// offsets, MergePatch applies an RFC 7386 merge patch in place, and
// WriteKey and ChildPath render JSON paths ($.a["b c"][0]). Nothing here
// checks its input: on bytes that are not valid JSON the offsets mean
// nothing.
package jsonedit

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
