package snapshot

import (
	"bytes"
	"fmt"
)

// SyntaxError is invalid JSON: the file, the 1-based line and column of the
// offending byte, the JSON path of the value being read, and what was
// expected there.
type SyntaxError struct {
	File   string
	Offset int // byte offset, 0-based
	Line   int // 1-based
	Column int // 1-based, in bytes
	Path   string
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: invalid JSON at %s: %s", e.File, e.Line, e.Column, e.Path, e.Msg)
}

// ModelError is valid JSON that is not a valid object model: the file, the
// JSON path of the offending value and what was expected.
type ModelError struct {
	File string
	Path string
	Msg  string
}

func (e *ModelError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.File, e.Path, e.Msg)
}

// lineCol returns the 1-based line and column of offset off in data.
func lineCol(data []byte, off int) (line, col int) {
	if off > len(data) {
		off = len(data)
	}
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = off - bytes.LastIndexByte(before, '\n')
	return line, col
}
