package snapshot

import (
	"fmt"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"unsafe"

	"github.com/objgc/objgc/internal/jsonedit"
	"github.com/objgc/objgc/internal/swar"
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

// canonKeyOf is canonKey past its last answer. The key is looked up in
// recentKeys first: a model has a few dozen keys, which the table holds
// and finds without hashing the key's text for the map.
func (s *scanner) canonKeyOf(off int32) int32 {
	k := keyAt(s.data, int(off))
	e := &s.recentKeys[recentSlot(k)]
	if e.off > 0 && e.key == k {
		return e.off
	}
	rk, ok := s.keyOffs[k]
	if !ok {
		if len(s.keyOffs) >= maxKeys {
			return off
		}
		if s.keyOffs == nil {
			s.keyOffs, s.idx.keySegs = map[string]recentKey{}, map[int32]string{}
		}
		rk = recentKey{key: strings.Clone(k), off: off}
		s.keyOffs[rk.key] = rk
		s.idx.keySegs[off] = keySeg(rk.key)
	}
	*e = rk
	return rk.off
}

// recentKey is a key canonKey recorded (a copy, not a view of the
// document, whose pages may be released) and the first offset of it.
type recentKey struct {
	key string
	off int32 // 0 in an empty slot of recentKeys: no key starts a document
}

// recentKeysLen is the size of scanner.recentKeys, a direct-mapped table
// of keys by recentSlot: two keys in one slot cost a map lookup each, never
// a wrong answer.
const recentKeysLen = 64

// recentSlot is the slot of recentKeys for the key k, from its length and
// its end bytes: cheap, and different for most of the keys of a model.
func recentSlot(k string) int {
	h := uint(len(k))
	if len(k) > 0 {
		h = h*31 + uint(k[0])*7 + uint(k[len(k)-1])
	}
	return int(h % recentKeysLen)
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

// smallKeys is how many keys of one JSON object keySet compares one by
// one; past that, it keeps them in a map. Murano objects, headers and
// records have a handful.
const smallKeys = 16

// keySeed and keySeeds make the hashes of long keys unpredictable to
// whoever writes a model: a collision costs a second reading of the
// object's keys up to the key read, never a wrong answer
// (confirmDuplicate).
var (
	keySeed  = maphash.MakeSeed()
	keySeeds = [2]uint64{rand.Uint64(), rand.Uint64()}
)

// headerKey is the keyHash of "?", the key of an object's header.
const headerKey = '?' | 1<<56

// keyHash returns a value equal for two keys whose decoded text is equal:
// a key shorter than 8 bytes is the value itself (its bytes and its
// length, in the top byte), a longer one a hash with the top bit set. The
// key is the raw span data[ks:ke] between the quotes; escaped keys (rare)
// are decoded first, so that "Obj\u0065cts" is "Objects". scanner.key
// takes the first form itself for the short plain keys it reads in one
// word.
func (s *scanner) keyHash(ks, ke int, escaped bool) uint64 {
	if escaped {
		return shortOrHash(unescape(s.data[ks-1 : ke+1]))
	}
	return shortOrHash(s.str(ks, ke))
}

func shortOrHash(k string) uint64 {
	switch {
	case len(k) < 8:
		var w uint64
		for i := len(k) - 1; i >= 0; i-- {
			w = w<<8 | uint64(k[i])
		}
		return w | uint64(len(k))<<56
	case len(k) <= 16:
		// Most long keys of a model are this long, and cost less than
		// maphash's calls this way: their first and last words (one
		// over the other below 16 bytes) and length, seeded, folded by
		// one 128-bit product, as Go's runtime hashes short strings
		// where the CPU has no AES (runtime/hash64.go).
		a := swar.Load8(k, 0) ^ keySeeds[0]
		b := swar.Load8(k, len(k)-8) ^ keySeeds[1] ^ uint64(len(k))
		hi, lo := bits.Mul64(a, b)
		return hi ^ lo | 1<<63
	}
	return maphash.String(keySeed, k) | 1<<63
}

// keySet holds the keys read so far of one open JSON object, so that a
// key written a second time is refused as it is read: a million copies
// of one key cost one comparison each, not a million entries kept until
// the object closes. The first smallKeys keys are the hashes
// s.keys[base:] (a stack shared by the open objects, innermost last), with
// seen a 64-bit filter of them that lets most keys skip the comparisons;
// past smallKeys they move to big.
type keySet struct {
	base int
	seen uint64
	big  map[uint64]struct{}
}

// openKeys returns the keySet of an object whose first key is about to
// be read.
func (s *scanner) openKeys() keySet { return keySet{base: len(s.keys)} }

// newKey records the key hash h in set when that needs no comparison:
// its filter bit is clear, so h is new, and the object holds fewer than
// smallKeys keys on the stack (one with big holds smallKeys there, so
// that its keys go to addKey too). It reports false otherwise, and addKey
// decides. It is addKey's common case, small enough for Go to inline
// where every key of the model is read.
func (s *scanner) newKey(set *keySet, h uint64) bool {
	bit := keyBit(h)
	if set.seen&bit != 0 || len(s.keys)-set.base >= smallKeys {
		return false
	}
	set.seen |= bit
	s.keys = append(s.keys, h)
	return true
}

// keyBit is the bit of keySet.seen for the key hash h.
func keyBit(h uint64) uint64 { return 1 << (h * 0x9e3779b97f4a7c15 >> 58) }

// addKey records the key k of the JSON object at open, whose path segment
// is s.path[seg], already set to the key, when newKey did not. A key read
// before in the same object is a *ModelError at this one's path: Python's
// json.loads, which Murano's engine uses, keeps the last value, and this
// reader, like others, would keep another (the first header, the first
// "Objects", both records lists).
func (s *scanner) addKey(set *keySet, open, seg int, k objKey) error {
	h, bit := k.hash, keyBit(k.hash)
	if set.big != nil {
		if _, ok := set.big[h]; ok {
			return s.confirmDuplicate(open, seg, k)
		}
		set.big[h] = struct{}{}
		return nil
	}
	if set.seen&bit != 0 {
		for _, kh := range s.keys[set.base:] {
			if kh == h {
				if err := s.confirmDuplicate(open, seg, k); err != nil {
					return err
				}
				break
			}
		}
	}
	set.seen |= bit
	if len(s.keys)-set.base < smallKeys {
		s.keys = append(s.keys, h)
		return nil
	}
	set.big = make(map[uint64]struct{}, 2*smallKeys)
	for _, kh := range s.keys[set.base:] {
		set.big[kh] = struct{}{}
	}
	set.big[h] = struct{}{}
	return nil
}

// closeKeys drops the keys of the object that set belongs to, which has
// closed.
func (s *scanner) closeKeys(set *keySet) { s.keys = s.keys[:set.base] }

// confirmDuplicate returns the error for key, read in the JSON object at
// open, when one of the members before it has the same decoded key; nil
// when none has (two keys' hashes were equal). The members before the key
// were validated as they were read.
func (s *scanner) confirmDuplicate(open, seg int, key objKey) error {
	ks := key.start
	k := s.str(ks, key.end)
	if key.escaped {
		k = unescape(s.data[ks-1 : key.end+1])
	}
	for p := jsonedit.WS(s.data, open+1); p < ks-1; {
		if keyAt(s.data, p) == k {
			s.path[seg] = int32(ks - 1)
			line, _ := lineCol(s.data, p)
			return s.modelErr(fmt.Sprintf("duplicate key %s (the first at line %d); Python's json.loads, which Murano's engine uses, keeps the last value of a key written twice and objgc refuses to guess which one was meant: remove one of them", strconv.Quote(k), line))
		}
		p = jsonedit.WS(s.data, jsonedit.String(s.data, p)) + 1 // ':'
		p = jsonedit.WS(s.data, jsonedit.Value(s.data, jsonedit.WS(s.data, p)))
		p = jsonedit.WS(s.data, p+1) // ','
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
