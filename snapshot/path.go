package snapshot

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"

	"github.com/objgc/objgc/internal/jsonedit"
	"github.com/objgc/objgc/internal/swar"
)

// renderPath turns path segments into a JSON path such as
// $.applications[0]["?"].id. Keys that are not identifiers are quoted.
// Very deep paths keep their first and last segments.
func renderPath(data []byte, segs []int32) string {
	return renderCut(data, nil, segs, nil, len(segs))
}

// pathKeep is how many segments a very deep path keeps at each end: a
// path of more than 2*pathKeep segments is written with "..." in the
// middle, so that a path is never longer than a few hundred bytes however
// deep its value (the reader allows MaxDepth levels, and a model may hold
// a reference at that depth 60,000 times).
const pathKeep = 12

// renderCut renders the segments a followed by b as the start of a path of
// total segments: when total > 2*pathKeep, the segments from pathKeep to
// total-pathKeep are written as "...". keys holds the rendered segments of
// some keys by offset (Tree.keySegs; nil for none): those are not read
// from data.
func renderCut(data []byte, keys map[int32]string, a, b []int32, total int) string {
	var sb strings.Builder
	sb.WriteString("$")
	n := len(a) + len(b)
	for i := 0; i < n; i++ {
		if total > 2*pathKeep && i == pathKeep {
			sb.WriteString("...")
			i = total - pathKeep
			if i >= n {
				break
			}
		}
		if i < len(a) {
			writeSeg(&sb, data, keys, a[i])
		} else {
			writeSeg(&sb, data, keys, b[i-len(a)])
		}
	}
	return sb.String()
}

// writeSeg writes one segment: [3] for -(3+1), .key or ["key"] for the
// offset of a key's opening quote (from keys when it holds the offset),
// nothing for 0 (a key's quote is never at offset 0, it sits inside an
// object: 0 marks an object whose next key is not read yet).
func writeSeg(sb *strings.Builder, data []byte, keys map[int32]string, seg int32) {
	switch {
	case seg < 0:
		sb.WriteByte('[')
		sb.WriteString(strconv.Itoa(int(-seg - 1)))
		sb.WriteByte(']')
	case seg > 0:
		if k, ok := keys[seg]; ok {
			sb.WriteString(k)
			return
		}
		jsonedit.WriteKey(sb, keyAt(data, int(seg)))
	}
}

// keySeg returns the segment writeSeg writes for key k.
func keySeg(k string) string {
	var sb strings.Builder
	jsonedit.WriteKey(&sb, k)
	return sb.String()
}

// keyAt decodes the key whose opening quote is at off: a view of data
// (never modified) when the key holds no escape, so that rendering or
// looking up a key costs no copy; a string of its own when it does.
func keyAt(data []byte, off int) string {
	end := off + 1
	// Eight bytes at a time to the first quote or backslash: the key was
	// validated, nothing else in it needs a look.
	for end+8 <= len(data) {
		x := binary.LittleEndian.Uint64(data[end:])
		if m := swar.HasByte(x, '"') | swar.HasByte(x, '\\'); m != 0 {
			end += bits.TrailingZeros64(m) >> 3
			break
		}
		end += 8
	}
	escaped := false
	for end < len(data) && data[end] != '"' {
		if data[end] == '\\' {
			escaped = true
			end++
		}
		end++
	}
	switch {
	case end >= len(data):
		return string(data[off+1:])
	case escaped:
		return unescape(data[off : end+1])
	case end == off+1:
		return ""
	}
	return unsafe.String(&data[off+1], end-off-1)
}

// pathWalker names the JSON paths of many values inside one copy (or
// inside a tree outside its copies) in one pass over the copy's own bytes:
// the copies nested in it are jumped over by their known spans, so that
// every byte of a tree is read at most once however many references it
// holds (rescanning the enclosing object for each reference would be
// quadratic). The input is already validated; on anything else the paths
// mean nothing but the walk still ends.
type pathWalker struct {
	t    *Tree
	data []byte
	base []int32 // the segments of the value at from, from the document root
	root string  // or, outside every copy, the path of the tree's root
	// segs holds one segment per open array or object below from: its
	// current member, as in Tree.segs (-(index+1), a key's offset, or 0
	// before an object's first key).
	segs []int32
	arr  []bool // whether each open container is an array
	// prefix caches the path without its last segment for a value in the
	// innermost container; it changes only when a container opens or
	// closes, so 60,000 items of one array render it once.
	prefix   string
	prefixOK bool
}

// walk visits data[from:to], a copy (or the tree's span when it is not in
// any copy), and calls emit(k, path) for each targets[k], which must be
// ascending offsets of value starts in its own bytes (not inside a nested
// copy). Targets it cannot place get the path of the deepest container
// reached.
func (w *pathWalker) walk(from, to int, targets []int, emit func(k int, path string)) {
	data := w.data
	w.segs, w.arr = w.segs[:0], w.arr[:0]
	w.prefixOK = false
	k := 0
	pos := from
	for k < len(targets) {
		// pos is at (or before white space before) a value.
		pos = jsonedit.WS(data, pos)
		if pos >= to {
			break
		}
		for k < len(targets) && targets[k] <= pos {
			if targets[k] == pos {
				emit(k, w.here())
			} else {
				emit(k, w.top())
			}
			k++
		}
		if k == len(targets) {
			return
		}
		switch data[pos] {
		case '{':
			if pos != from {
				if j := w.t.ObjectAt(pos); j >= 0 && int(w.t.Objects[j].Start) == pos {
					pos = int(w.t.Objects[j].End) // a nested copy: none of ours inside
					break
				}
			}
			pos = jsonedit.WS(data, pos+1)
			if pos < to && data[pos] == '}' {
				pos++
				break
			}
			w.segs, w.arr = append(w.segs, 0), append(w.arr, false)
			w.prefixOK = false
			pos = w.member(pos)
			continue
		case '[':
			pos = jsonedit.WS(data, pos+1)
			if pos < to && data[pos] == ']' {
				pos++
				break
			}
			w.segs, w.arr = append(w.segs, -1), append(w.arr, true)
			w.prefixOK = false
			continue
		default:
			pos = jsonedit.Value(data, pos)
		}
		// After a value: close containers until one has a next member.
		for len(w.segs) > 0 {
			pos = jsonedit.WS(data, pos)
			if pos >= to {
				break
			}
			top := len(w.segs) - 1
			if data[pos] == ',' {
				pos = jsonedit.WS(data, pos+1)
				if w.arr[top] {
					w.segs[top]--
				} else {
					pos = w.member(pos)
				}
				break
			}
			pos++ // '}' or ']'
			w.segs, w.arr = w.segs[:top], w.arr[:top]
			w.prefixOK = false
		}
		if len(w.segs) == 0 {
			break
		}
	}
	for ; k < len(targets); k++ {
		emit(k, w.top())
	}
}

// member records the key at pos as the innermost object's current member
// and returns the offset of its value.
func (w *pathWalker) member(pos int) int {
	w.segs[len(w.segs)-1] = int32(pos)
	pos = jsonedit.WS(w.data, jsonedit.String(w.data, pos))
	return pos + 1 // the ':'
}

// here returns the path of the current member of the innermost open
// container (of the value at from when none is open): renderPath2 of base
// and segs, with all but the last segment cached.
func (w *pathWalker) here() string {
	n := len(w.segs)
	if n == 0 {
		return w.cut(nil, len(w.base))
	}
	if !w.prefixOK {
		w.prefix = w.cut(w.segs[:n-1], w.total())
		w.prefixOK = true
	}
	var b strings.Builder
	b.Grow(len(w.prefix) + 16)
	b.WriteString(w.prefix)
	writeSeg(&b, w.data, w.t.keySegs, w.segs[n-1])
	return b.String()
}

// top returns the path of the innermost open container.
func (w *pathWalker) top() string {
	segs := w.segs[:max(len(w.segs)-1, 0)]
	return w.cut(segs, w.total()-(len(w.segs)-len(segs)))
}

// total is the number of segments of the path of a value in the innermost
// container (from the tree's root outside every copy).
func (w *pathWalker) total() int { return len(w.base) + len(w.segs) }

// cut renders base and then segs as the start of a path of total segments.
func (w *pathWalker) cut(segs []int32, total int) string {
	if w.root != "" {
		return w.root + renderCut(w.data, w.t.keySegs, nil, segs, total)[1:]
	}
	return renderCut(w.data, w.t.keySegs, w.base, segs, total)
}
