package snapshot

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/objgc/objgc/internal/jsonedit"
)

// str returns a string that shares data's memory: the input is never
// modified after it is read, so the view costs nothing and stays valid
// until the document is closed (Document.Close unmaps a mapped one).
func (s *scanner) str(start, end int) string {
	if end <= start {
		return ""
	}
	return unsafe.String(&s.data[start], end-start)
}

// idRef copies id into the index's ids and returns where it is. Every
// later reading of an id (the id index, the comparison, the plan) reads
// that copy, held together and resident, and never the document, whose
// pages are released as it is read when it is mapped: a lookup in an
// index of ids read from a mapped document faulted a page in for each
// probe.
func (s *scanner) idRef(id string) strRef {
	if id == "" {
		return strRef{}
	}
	if cap(s.idx.ids)-len(s.idx.ids) < len(id) {
		s.idx.ids = grow(s.idx.ids, len(id), s.pos, len(s.data))
	}
	off := len(s.idx.ids)
	s.idx.ids = append(s.idx.ids, id...)
	return strRef{off: int32(off), n: int32(len(id))}
}

// maxKeys is how many distinct keys an index renders once (keySegs): a
// model has a few dozen property names on the way to its objects; past
// that, a key is read from the document when its path is rendered.
const maxKeys = 1 << 12

// canonKey returns the offset to record for the key whose opening quote is
// at off, a segment of an object's path: the first offset of the same key
// among those recorded, whose rendered segment keySegs holds.
func (s *scanner) canonKey(off int32) int32 {
	// Copies one after the other in an array share their key: the same
	// offset as the last one.
	if off == s.lastKey {
		return s.lastCanon
	}
	c := s.canonKeyOf(off)
	s.lastKey, s.lastCanon = off, c
	return c
}

func (s *scanner) canonKeyOf(off int32) int32 {
	k := keyAt(s.data, int(off))
	if c, ok := s.keyOffs[k]; ok {
		return c
	}
	if len(s.keyOffs) >= maxKeys {
		return off
	}
	if s.keyOffs == nil {
		s.keyOffs, s.idx.keySegs = map[string]int32{}, map[int32]string{}
	}
	k = strings.Clone(k)
	s.keyOffs[k] = off
	s.idx.keySegs[off] = keySeg(k)
	return off
}

// maxTypes is how many distinct types an index keeps in its table: a
// model has a few dozen classes; past that, a type is read from the
// document (a model of a million distinct types must not cost a map
// entry each).
const maxTypes = 1 << 12

// typeRef returns the reference an Object keeps for the type v, a header
// string the scanner returned: its place in the index's table of types,
// else its place in data (v is a view of it, written without escapes),
// else a new place in the table (a decoded type). known reports a type
// already in the table: one validated before (header).
func (s *scanner) typeRef(v string) (ref strRef, known bool) {
	if v == "" {
		return strRef{}, false
	}
	if k, ok := s.types[v]; ok {
		return strRef{off: k, n: -1}, true
	}
	off := uintptr(unsafe.Pointer(unsafe.StringData(v))) - uintptr(unsafe.Pointer(unsafe.SliceData(s.data)))
	inData := off < uintptr(len(s.data))
	if inData && len(s.types) >= maxTypes {
		return strRef{off: int32(off), n: int32(len(v))}, false
	}
	if inData {
		v = strings.Clone(v) // the table keeps a copy, not a view of the document
	}
	k := int32(len(s.idx.ext))
	s.idx.ext = append(s.idx.ext, v)
	if len(s.types) < maxTypes {
		if s.types == nil {
			s.types = map[string]int32{}
		}
		s.types[v] = k
	}
	return strRef{off: k, n: -1}, false
}

// legacy returns objExt.legacy for h: 0 when it has no legacy
// classVersion or package keys (most models), else 1 + their place in the
// index's table.
func (s *scanner) legacy(h *header) int32 {
	if h.classVersion == "" && h.pkg == "" {
		return 0
	}
	s.idx.legacies = append(s.idx.legacies, legacyType{version: h.classVersion, pkg: h.pkg})
	return int32(len(s.idx.legacies))
}

// smallKeys is how many keys an object may have for uniqueKeys to compare
// them pairwise; past that, it sorts them. Murano objects, headers and
// records have a handful.
const smallKeys = 16

// keySeed makes the hashes of long keys unpredictable to whoever writes a
// model: a collision costs a second reading of the object's keys, never a
// wrong answer (duplicateKey).
var keySeed = maphash.MakeSeed()

// keyHash returns a value equal for two keys whose decoded text is equal:
// a key shorter than 8 bytes is the value itself (its bytes and its
// length, in the top byte), a longer one a hash with the top bit set. The
// key is the raw span data[ks:ke] between the quotes; escaped keys (rare)
// are decoded first, so that "Obj\u0065cts" is "Objects".
func (s *scanner) keyHash(ks, ke int, escaped bool) uint64 {
	if escaped {
		return shortOrHash(unescape(s.data[ks-1 : ke+1]))
	}
	n := ke - ks
	if n < 8 && ks+8 <= len(s.data) {
		return binary.LittleEndian.Uint64(s.data[ks:])&(1<<(8*n)-1) | uint64(n)<<56
	}
	return shortOrHash(s.str(ks, ke))
}

func shortOrHash(k string) uint64 {
	if len(k) < 8 {
		var w uint64
		for i := len(k) - 1; i >= 0; i-- {
			w = w<<8 | uint64(k[i])
		}
		return w | uint64(len(k))<<56
	}
	return maphash.String(keySeed, k) | 1<<63
}

// uniqueKeys checks that the keys of the JSON object at open, whose
// keyHash values are s.keys[base:], are distinct, and drops them from
// s.keys. A key written twice is a *ModelError at the second one's path
// (its segment is s.path[seg]): Python's json.loads, which Murano's engine
// uses, keeps the last value, and this reader, like others, would keep
// another (the first header, the first "Objects", both records lists).
// The keys are compared by their hashes, read as they were scanned: the
// object's bytes are read again only when two hashes are equal.
func (s *scanner) uniqueKeys(open, base, seg int) error {
	h := s.keys[base:]
	s.keys = s.keys[:base]
	dup := false
	if len(h) <= smallKeys {
		for i := 1; i < len(h) && !dup; i++ {
			for j := 0; j < i; j++ {
				if h[i] == h[j] {
					dup = true
					break
				}
			}
		}
	} else {
		slices.Sort(h)
		for i := 1; i < len(h); i++ {
			if h[i] == h[i-1] {
				dup = true
				break
			}
		}
	}
	if !dup {
		return nil
	}
	return s.duplicateKey(open, seg)
}

// duplicateKey returns the error for the first key of the (valid) JSON
// object at open that is written a second time, in document order; nil
// when there is none (two keys' hashes were equal).
func (s *scanner) duplicateKey(open, seg int) error {
	ms, _ := jsonedit.Members(s.data, open)
	first := make(map[string]int, len(ms))
	for _, m := range ms {
		k := keyAt(s.data, m.Start)
		f, ok := first[k]
		if !ok {
			first[k] = m.Start
			continue
		}
		s.path[seg] = int32(m.Start)
		line, _ := lineCol(s.data, f)
		return s.modelErr(fmt.Sprintf("duplicate key %s (the first at line %d); Python's json.loads, which Murano's engine uses, keeps the last value of a key written twice and objgc refuses to guess which one was meant: remove one of them", strconv.Quote(k), line))
	}
	return nil
}

// mayAnchor reports whether an object whose path has seg segments may
// anchor the paths of the objects it encloses (Object.segPre): any but the
// document's root and an engine task's "model", which enclose the trees,
// so that every anchor of a copy is a copy of the same tree, on its chain
// of enclosing copies (Tree.segsOf).
func (s *scanner) mayAnchor(seg int) bool {
	return seg > 1 || seg == 1 && !s.inModel
}

// Root keys (and those of an engine task's "model") are recorded so that
// the input form can be told without a second pass.
func (s *scanner) noteKey(keys *[]keySpan, ks, ke int, esc bool) string {
	k := s.str(ks, ke)
	if esc {
		k = unescape(s.data[ks-1 : ke+1])
	}
	*keys = append(*keys, keySpan{key: k, start: int32(s.pos)})
	return k
}
