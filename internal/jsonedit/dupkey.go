package jsonedit

import (
	"bytes"
	"strconv"
	"strings"
)

// DuplicateKey looks in the valid JSON text data for a key written twice in
// one JSON object (compared decoded: "\u0061" is "a"). It returns the JSON
// path of the first such second key in document order ("$" is the root,
// keys as WriteKey renders them) and the key; ok is false when every
// object's keys are distinct. RFC 8259 section 4 leaves such an object's
// meaning to the reader: Python's json and encoding/json keep the last
// value, gjson and streaming readers the first.
//
// It reads data once, keeping the keys of the open objects only; an
// object's keys are compared one by one up to dupSmall of them, through a
// set of its own past that.
func DuplicateKey(data []byte) (path, key string, ok bool) {
	type frame struct {
		obj   bool
		base  int                 // its keys start at keys[base]
		key   int                 // the current key's opening quote (obj)
		index int                 // the current item's index (array)
		set   map[string]struct{} // past dupSmall keys
	}
	type span struct{ start, end int } // a key with its quotes
	var (
		stack []frame
		keys  []span
		atKey bool // the next string is a key
	)
	same := func(a, b span) bool {
		ra, rb := data[a.start:a.end], data[b.start:b.end]
		if bytes.Equal(ra, rb) {
			return true
		}
		if bytes.IndexByte(ra, '\\') < 0 && bytes.IndexByte(rb, '\\') < 0 {
			return false
		}
		ka, _ := DecodeString(ra)
		kb, _ := DecodeString(rb)
		return ka == kb
	}
	for i := 0; i < len(data); {
		switch data[i] {
		case '{':
			stack = append(stack, frame{obj: true, base: len(keys)})
			atKey = true
			i++
		case '[':
			stack = append(stack, frame{base: len(keys)})
			atKey = false
			i++
		case '}', ']':
			if len(stack) == 0 {
				return "", "", false // not valid JSON
			}
			top := stack[len(stack)-1]
			keys = keys[:top.base]
			stack = stack[:len(stack)-1]
			atKey = false
			i++
		case ',':
			if len(stack) == 0 {
				return "", "", false
			}
			top := &stack[len(stack)-1]
			atKey = top.obj
			top.index++
			i++
		case '"':
			end := String(data, i)
			if atKey && len(stack) > 0 {
				atKey = false
				top := &stack[len(stack)-1]
				top.key = i
				k := span{i, end}
				mine := keys[top.base:]
				dup := false
				switch {
				case top.set != nil:
					dk, _ := DecodeString(data[i:end])
					_, dup = top.set[dk]
					top.set[dk] = struct{}{}
				case len(mine) < dupSmall:
					for _, o := range mine {
						if same(o, k) {
							dup = true
							break
						}
					}
					keys = append(keys, k)
				default:
					top.set = make(map[string]struct{}, 2*dupSmall)
					for _, o := range append(mine, k) {
						dk, _ := DecodeString(data[o.start:o.end])
						_, dup = top.set[dk]
						top.set[dk] = struct{}{}
					}
				}
				if dup {
					return renderTrail(data, stackSteps(len(stack), func(j int) (bool, int, int) {
						return stack[j].obj, stack[j].key, stack[j].index
					}))
				}
			}
			i = end
		default:
			i++
		}
	}
	return "", "", false
}

// dupSmall is how many keys of one object DuplicateKey compares one by one.
const dupSmall = 16

// stackSteps returns, for n open containers described by at (an object
// and its current key's offset, or an array and its current index), the
// steps from the root.
func stackSteps(n int, at func(j int) (obj bool, key, index int)) []step {
	steps := make([]step, n)
	for j := range n {
		obj, key, index := at(j)
		if obj {
			steps[j] = step{key: key, index: -1}
		} else {
			steps[j] = step{index: index}
		}
	}
	return steps
}

// step is a step of a JSON path: the key whose opening quote is at key,
// or an array's index (index >= 0).
type step struct {
	key, index int
}

// renderTrail renders steps as a JSON path, and returns the last key.
func renderTrail(data []byte, steps []step) (path, key string, ok bool) {
	var b strings.Builder
	b.WriteByte('$')
	for _, s := range steps {
		if s.index >= 0 {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
			continue
		}
		key, _ = DecodeString(data[s.key:String(data, s.key)])
		WriteKey(&b, key)
	}
	return b.String(), key, true
}
