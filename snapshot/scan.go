package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/objgc/objgc/internal/jsonedit"
	"github.com/objgc/objgc/internal/swar"
)

// MaxDepth is the deepest nesting of JSON arrays and objects the reader
// accepts. Murano models nest a few dozen levels at most; the limit turns
// hostile input into a clear error instead of unbounded work.
const MaxDepth = 1000

// MaxSize is the largest input the reader accepts, in bytes: offsets are
// kept as int32 to keep the index small.
const MaxSize = 1<<31 - 1

// strFlagEscaped marks, in strVal.n, a string whose raw bytes hold escapes.
const strFlagEscaped = 1 << 31

// strVal is a string value outside headers: a candidate reference.
type strVal struct {
	off int32  // offset of the opening quote
	n   uint32 // raw length between the quotes, | strFlagEscaped
}

// keySpan is a key of the document's root object, or of its "model" object.
type keySpan struct {
	key        string
	start, end int32 // the value's byte span
	null       bool
}

// flatIndex is what one pass over a document records. Objects are in the
// order their closing brace appears (owned objects before their owner);
// strings are in document order.
type flatIndex struct {
	objects []Object
	strs    []strVal
	segs    []int32 // path segments: > 0 key offset, < 0 array index -(i+1); see Object.bits
	// keySegs holds the rendered path segment (.key, ["k\"ey"]) of the
	// first offset of each distinct key in segs, up to maxKeys: a key
	// recorded again is recorded at that offset (scanner.canonKey), so
	// that rendering a path reads none of the document.
	keySegs map[int32]string
	deps    []Dependency // onDestruction records of all headers
	exts    []objExt     // legacy type keys and records, of the objects that have some (Object.ext)
	// farHeaders holds the header's offset by Start of the objects
	// whose header lies too far from their start for Object.hdr.
	farHeaders map[int32]int32
	ids        []byte       // ids of the objects, one after the other (Object.id)
	ext        []string     // distinct and decoded types (strRef with n < 0)
	legacies   []legacyType // legacy type keys (objExt.legacy)
	rootKeys   []keySpan
	taskKeys   []keySpan // keys of root.model when it is an object
	rootKind   byte      // first byte of the root value

	// subs are the envelope's trees scanned by scanners of their own, in
	// document order; their objects, strings, segments and records are
	// not in this index (see scanner.speculate).
	subs []*subScan
}

// subScan is the scan of one value of a document, [start, end), made in
// parallel with the rest, at a place guessed (scanner.speculate).
type subScan struct {
	start, end int // end is known once the scan is adopted
	idx        *flatIndex
	err        error // the value's own error, or a fault (*ChangedError)
	pos        int   // where the scanner stopped
	done       chan struct{}

	// keyOff is the offset of the opening quote of the key the value was
	// guessed to follow. adopted is set once the one-pass reading reached
	// that key: the guess held.
	keyOff  int
	adopted bool
	abandon atomic.Bool
}

// errAbandoned ends a scan started on a guess that proved wrong.
var errAbandoned = errors.New("speculative scan abandoned")

// scanner is a validating recursive-descent JSON reader that records the
// object model as it goes.
type scanner struct {
	file    string
	data    []byte
	pos     int
	depth   int
	path    []int32
	pending []int32 // objects whose enclosing object is not yet known
	// anchors holds the path lengths of the open objects whose header
	// is read and that may anchor (anchors), innermost last: an object's
	// segments are recorded from the innermost one's (Object.segPre).
	anchors []int32
	// keys holds a keyHash of each key read of the JSON objects still
	// open, innermost last: an object's keys are compared when it closes
	// (uniqueKeys).
	keys []uint64
	idx  flatIndex

	doc *Document // released every releaseEvery objects
	// parallel lets the scanner hand the value of an envelope's other
	// tree to a scanner of its own (speculate).
	parallel bool
	types    map[string]int32 // the index's table of types (typeRef)
	keyOffs  map[string]int32 // first offset of each key in keySegs (canonKey)
	// lastKey is the last offset canonKey was given, lastCanon what it
	// returned.
	lastKey, lastCanon int32
	// speculated is set once the scanner decided how to read the
	// envelope's trees (speculate).
	speculated bool
	// abandon, set for a scanner started on a guessed place (speculate),
	// stops it when the guess proved wrong.
	abandon *atomic.Bool

	// waiting is set while the scanner waits for a scan of its own
	// (wait): it does not count as a reader of the document.
	waiting bool

	inHeader int  // > 0 while reading a header: nothing is recorded
	inModel  bool // reading the value of the root's "model" key
	// high is set by string when the string holds a byte of 0x7f or
	// above (DEL or non-ASCII): only such strings, or escaped ones, can
	// hold a control character.
	high bool
}

// str returns a string that shares data's memory: the input is never
// modified after it is read, so the view stays valid and costs nothing.
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

// defaultParallelMin is the least size in bytes of an envelope's
// "Objects" or "ObjectsCopy" value that the reader scans on a goroutine of
// its own, while it goes on with the rest of the document (the other
// tree): two trees of a large model are read on two cores. Tests set
// Document.parallelMin.
const defaultParallelMin = 8 << 20

// parallelMinOf returns doc's parallelMin, or defaultParallelMin.
func parallelMinOf(doc *Document) int {
	if doc.parallelMin > 0 {
		return doc.parallelMin
	}
	return defaultParallelMin
}

// scan reads doc's data, releasing the pages read as it goes when doc is
// mapped (Document.release). The trees of a large envelope are scanned in
// parallel (defaultParallelMin); when any part of that goes wrong (a syntax or
// model error, a value whose end the bracket count and the scanner see
// differently) the document is scanned again in one pass, so that errors
// are those of the one-pass reader, the first in document order.
func scan(doc *Document) (*flatIndex, error) {
	if len(doc.Data) >= parallelMinOf(doc) && looksLikeEnvelope(doc.Data) {
		idx, err := scanWith(doc, true)
		if err == nil && idx != nil {
			return idx, nil
		}
		var ce *ChangedError
		if errors.As(err, &ce) {
			return nil, err
		}
	}
	return scanWith(doc, false)
}

// scanWith is one scan of doc. With parallel, it returns a nil index and
// a nil error when a parallel part went wrong: the caller scans again.
func scanWith(doc *Document, parallel bool) (*flatIndex, error) {
	file, data, mapped := doc.Name, doc.Data, doc.Mapped()
	if len(data) > MaxSize {
		return nil, &ModelError{File: file, Path: "$", Msg: fmt.Sprintf("input is %d bytes; at most %d are supported", len(data), MaxSize)}
	}
	s := &scanner{file: file, data: data, doc: doc, parallel: parallel}
	doc.reading()
	defer func() {
		if !s.waiting {
			doc.leaving()
		}
	}()
	if parallel {
		// The envelope's own objects are few (in "Attributes", if any):
		// the trees' scanners size their own indexes.
		s.idx.alloc(nil, mapped)
	} else {
		s.idx.alloc(data, mapped)
	}
	if bytes.HasPrefix(data, utf8BOM) {
		return nil, s.syntax("the file starts with a UTF-8 byte-order mark (bytes EF BB BF); remove it: JSON text must not begin with one (RFC 8259 section 8.1) and Murano's engine refuses it")
	}
	s.ws()
	if s.pos >= len(s.data) {
		return nil, s.syntax("the input is empty; expected a JSON object or array")
	}
	s.idx.rootKind = s.data[s.pos]
	err := s.value()
	if err == nil {
		s.ws()
		if s.pos < len(s.data) {
			err = s.syntax(fmt.Sprintf("unexpected %s after the top-level value", s.describe()))
		}
	}
	// A value scanned on a guess that the reading never reached was not
	// the value of that key: stop that scan and forget it.
	s.wait()
	kept := s.idx.subs[:0]
	for _, sub := range s.idx.subs {
		if !sub.adopted {
			sub.abandon.Store(true)
			<-sub.done
			continue
		}
		kept = append(kept, sub)
	}
	s.idx.subs = kept
	for _, sub := range s.idx.subs {
		<-sub.done
	}
	for _, sub := range s.idx.subs {
		var ce *ChangedError
		if errors.As(sub.err, &ce) {
			return nil, sub.err
		}
		if sub.err != nil {
			return nil, nil // scan again in one pass
		}
	}
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) && looksLikeYAML(data) {
			se.Msg += "; this looks like YAML: objgc reads JSON (convert it, e.g. yq -o=json FILE)"
		}
		return nil, err
	}
	return &s.idx, nil
}

// alloc sizes the index for data: every object of the model has a header, so
// the count of '?' bytes is at least the count of objects (unless a header's
// key is written escaped) and rarely much more (a '?' in a string value);
// counting costs a pass at memory speed (40 ms for 370 MB). The objects
// array is the largest: growing it would hold the old and the new array at
// once, at the plan's peak. Real and generated models hold a string value
// per 80 to 250 bytes and a path segment per 30 to 250. A low estimate costs
// one copy (sized from the density seen so far, see grow) and a high one
// memory never touched, which the garbage collector counts as live all the
// same. String values and records, which a model may hold none of (a model
// of tiny objects has few), start at a tenth of the densest and grow from
// the density seen: the copy is of the part read.
func (x *flatIndex) alloc(data []byte, mapped bool) {
	objects, idLen := estimateObjects(data, mapped)
	x.objects = make([]Object, 0, objects+16)
	x.strs = make([]strVal, 0, len(data)/1024+16)
	// Two segments an object (Object.segPre): a key and an index.
	x.segs = make([]int32, 0, 2*cap(x.objects)+16)
	x.deps = make([]Dependency, 0, len(data)/16384+16)
	// Room reserved and never written costs no memory, but the garbage
	// collector counts it as live and lets the heap grow by that much
	// more: room for ids far longer than the model's is garbage the
	// collector waits for.
	x.ids = make([]byte, 0, (idLen+1)*cap(x.objects))
}

// reserve makes room in the index for data still to be read, sized as
// alloc sizes it, keeping what the index holds.
func (x *flatIndex) reserve(data []byte, mapped bool) {
	var more flatIndex
	more.alloc(data, mapped)
	x.objects = append(more.objects, x.objects...)
	x.strs = append(more.strs, x.strs...)
	x.segs = append(more.segs, x.segs...)
	x.deps = append(more.deps, x.deps...)
	x.exts = append(more.exts, x.exts...)
	x.ids = append(more.ids, x.ids...)
}

// looksLikeEnvelope reports whether data begins as an envelope or an
// engine task does: an object whose first key is "Objects", "ObjectsCopy",
// "Attributes" or "model". It only chooses how to scan.
func looksLikeEnvelope(data []byte) bool { return EnvelopeKey(FirstKey(data)) }

// EnvelopeKey reports whether k is a key of the root of an envelope
// ("Objects", "ObjectsCopy", "Attributes") or of an engine task ("model").
func EnvelopeKey(k string) bool {
	switch k {
	case "Objects", "ObjectsCopy", "Attributes", "model":
		return true
	}
	return false
}

// FirstKey returns the first key of the object at the root of data, read
// without reading the rest: "" when the root is not an object, or its
// first key is escaped or longer than 64 bytes (no key that tells a form
// apart is).
func FirstKey(data []byte) string {
	i := jsonedit.WS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return ""
	}
	i = jsonedit.WS(data, i+1)
	if i >= len(data) || data[i] != '"' {
		return ""
	}
	end := bytes.IndexAny(data[i+1:min(len(data), i+1+64)], `"\`)
	if end < 0 || data[i+1+end] != '"' {
		return ""
	}
	return string(data[i+1 : i+1+end])
}

// speculate starts the scan of the envelope's other tree on a goroutine
// of its own, at the place where it guesses that tree's key stands, while
// this scanner reads the tree whose key k it just read: two trees of a
// large model are read on two cores from the start, with no pass over the
// first to find where it ends. The guess is the nearest quoted "Objects"
// or "ObjectsCopy" to the middle of the rest of the input that is written
// as a key of an object (a ',' before it, a ':' and an object or array
// after it). It is checked by the reading itself: the value is used only
// when this scanner reaches that very key (scanner.guessed); any other
// guess is abandoned and the reading goes on in one pass.
func (s *scanner) speculate(k string) {
	other := "ObjectsCopy"
	if k == "ObjectsCopy" {
		other = "Objects"
	}
	keyOff, value := guessKey(s.data, s.pos, other)
	if least := parallelMinOf(s.doc); keyOff < 0 || keyOff-s.pos < least || len(s.data)-value < least {
		// One tree, or one small: this scanner reads the rest alone.
		s.idx.reserve(s.data[s.pos:], s.doc.Mapped())
		return
	}
	sub := &subScan{start: value, end: -1, keyOff: keyOff, done: make(chan struct{})}
	s.idx.subs = append(s.idx.subs, sub)
	c := &scanner{file: s.file, data: s.data, doc: s.doc, pos: value, depth: s.depth,
		path: append([]int32(nil), s.path...), abandon: &sub.abandon}
	c.path[len(c.path)-1] = int32(keyOff)
	c.doc.reading()
	go func() {
		defer close(sub.done)
		defer c.doc.leaving()
		sub.err = do(func() error {
			// The end is not known: the index is sized for the rest.
			c.idx.alloc(c.data[value:], c.doc.Mapped())
			err := c.value()
			sub.pos, sub.idx = c.pos, &c.idx
			return err
		}, c.doc)
	}()
	// This scanner reads the first tree: size its index for it.
	s.idx.reserve(s.data[s.pos:keyOff], s.doc.Mapped())
}

// guessed returns the scan started on a guess at the key whose opening
// quote is at keyOff, or nil.
func (s *scanner) guessed(keyOff int) *subScan {
	for _, sub := range s.idx.subs {
		if sub.keyOff == keyOff && !sub.adopted {
			return sub
		}
	}
	return nil
}

// guessWindow is how much of the input guessKey searches at a time, going
// out from the middle.
const guessWindow = 4 << 20

// guessKey returns the offset of the opening quote of the quoted key that
// stands nearest the middle of data[from:] and looks like an object's key
// followed by an object or an array, and the offset of that value; -1 when
// there is none. It reads outward from the middle a window at a time, so
// that its cost is the distance of the key from the middle (the two trees
// of an envelope are usually of similar size).
func guessKey(data []byte, from int, key string) (keyOff, value int) {
	pat := []byte(`"` + key + `"`)
	mid := from + (len(data)-from)/2
	for d := 0; mid-d > from || mid+d < len(data); d += guessWindow {
		// Before the middle, the last key of the window; after it, the
		// first: the one nearer the middle.
		keyOff, value = -1, -1
		lo, hi := max(mid-d-guessWindow, from), min(mid-d+len(pat)-1, len(data))
		for lo < hi {
			i := bytes.Index(data[lo:hi], pat)
			if i < 0 {
				break
			}
			if v := keyValue(data, from, lo+i, len(pat)); v >= 0 {
				keyOff, value = lo+i, v
			}
			lo += i + 1
		}
		if keyOff >= 0 {
			return keyOff, value
		}
		lo, hi = max(mid+d, from), min(mid+d+guessWindow+len(pat)-1, len(data))
		for lo < hi {
			i := bytes.Index(data[lo:hi], pat)
			if i < 0 {
				break
			}
			if v := keyValue(data, from, lo+i, len(pat)); v >= 0 {
				return lo + i, v
			}
			lo += i + 1
		}
	}
	return -1, -1
}

// keyValue returns the offset of the object or array after the quoted
// string of n bytes at data[q], when that string is written as a key that
// follows another member (white space, ',' before it, white space, ':'
// and white space after it); -1 otherwise.
func keyValue(data []byte, from, q, n int) int {
	i := q - 1
	for i > from && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i--
	}
	if i <= from || data[i] != ',' {
		return -1
	}
	v := jsonedit.WS(data, q+n)
	if v >= len(data) || data[v] != ':' {
		return -1
	}
	v = jsonedit.WS(data, v+1)
	if v >= len(data) || data[v] != '{' && data[v] != '[' {
		return -1
	}
	return v
}

var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// passChunk is the size of the pieces in which a fast pass over a mapped
// document (countByte, the hash) reads it, releasing each one behind it:
// such a pass reads gigabytes a second, far faster than the trimming
// goroutine releases pages (mapping, trimInterval).
const passChunk = 4 << 20

// releaseEvery is how many objects the loops over a whole document or tree
// read between two calls of Document.release.
const releaseEvery = 1 << 12

// estimateObjects returns the count of '?' bytes in data, exactly for
// data up to 16 MiB, else extrapolated from four windows of 1 MiB spread
// over it, plus an eighth: counting all of a mapped tree faulted its pages
// in once more before its scan did (a pass on the critical path of each
// of the two scans of a large envelope). A low estimate costs a copy
// (grow, from the density seen so far). It also returns the mean length of
// the ids written in the same bytes (the string after each "id" key), 32
// when they show none.
func estimateObjects(data []byte, mapped bool) (objects, idLen int) {
	const window = 1 << 20
	var c sampleCount
	if len(data) <= 16*window {
		c.add(data, mapped)
		return c.marks, c.idLen()
	}
	for k := range 4 {
		lo := (len(data) - window) * k / 3
		c.add(data[lo:lo+window], mapped)
	}
	est := int64(c.marks) * int64(len(data)) / (4 * window)
	return int(est + est/8), c.idLen()
}

// sampleCount counts, in the samples estimateObjects reads, the '?'
// bytes and the ids written.
type sampleCount struct {
	marks         int
	ids, idsBytes int
}

// add counts data, releasing the pages read behind it when it is mapped.
func (c *sampleCount) add(data []byte, mapped bool) {
	eachChunk(data, mapped, func(chunk []byte) {
		c.marks += bytes.Count(chunk, []byte{'?'})
		for i := 0; ; {
			k := bytes.Index(chunk[i:], []byte(`"id"`))
			if k < 0 {
				return
			}
			i += k + len(`"id"`)
			j := jsonedit.WS(chunk, i)
			if j >= len(chunk) || chunk[j] != ':' {
				continue
			}
			if j = jsonedit.WS(chunk, j+1); j >= len(chunk) || chunk[j] != '"' {
				continue
			}
			n := bytes.IndexByte(chunk[j+1:], '"')
			if n < 0 {
				return
			}
			c.ids, c.idsBytes = c.ids+1, c.idsBytes+n
		}
	})
}

// idLen returns the mean length of the ids counted, rounded up; 32 (a
// Murano id's hex digits) for none.
func (c *sampleCount) idLen() int {
	if c.ids == 0 {
		return 32
	}
	return (c.idsBytes + c.ids - 1) / c.ids
}

// eachChunk calls fn with data passChunk bytes at a time, releasing each
// piece once fn is done with it when data is mapped.
func eachChunk(data []byte, mapped bool, fn func(chunk []byte)) {
	for lo := 0; lo < len(data); lo += passChunk {
		chunk := data[lo:min(lo+passChunk, len(data))]
		fn(chunk)
		if mapped {
			releasePages(chunk)
		}
	}
}

// looksLikeYAML reports whether data, which is not JSON, begins as YAML
// does: a "---" document marker, a "%YAML" directive, a comment, a list
// item "- ", or a first line "key: value" or "key:" whose key is not
// JSON (a JSON document begins with '{' or '[').
func looksLikeYAML(data []byte) bool {
	rest := data
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		t := bytes.TrimSpace(line)
		if len(t) == 0 {
			continue
		}
		switch {
		case t[0] == '{' || t[0] == '[':
			return false
		case bytes.HasPrefix(t, []byte("---")), bytes.HasPrefix(t, []byte("%YAML")), t[0] == '#', bytes.HasPrefix(t, []byte("- ")), bytes.Equal(t, []byte("-")):
			return true
		}
		return bytes.HasSuffix(t, []byte(":")) || bytes.Contains(t, []byte(": "))
	}
	return false
}

// grow returns s with room for n more elements, the capacity extrapolated
// from the input read so far: len(s) elements came from done of total
// bytes, so the rest of the input likely holds len(s)*(total-done)/done
// more; an eighth is added for variance. Doubling instead (or append's
// quarter steps) leaves up to half the array unused on a model whose
// objects are smaller than the initial estimate assumes, and the index is
// the largest structure after the file. The new capacity is at
// least a quarter more, so an input whose density rises late still costs
// few copies.
func grow[T any](s []T, n, done, total int) []T {
	c := cap(s) + cap(s)/4 + n
	if done > 0 && total > done {
		est := len(s) + int(int64(len(s))*int64(total-done)/int64(done))
		if est += est/8 + n; est > c {
			c = est
		}
	}
	g := make([]T, len(s), c)
	copy(g, s)
	return g
}

func (s *scanner) ws() {
	data, i := s.data, s.pos
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r':
			i++
		case '\n':
			// Pretty-printed models indent every line: skip the spaces
			// eight at a time.
			i++
			for i+8 <= len(data) {
				x := binary.LittleEndian.Uint64(data[i:]) ^ 0x2020202020202020
				if x != 0 {
					i += bits.TrailingZeros64(x) / 8
					break
				}
				i += 8
			}
		default:
			s.pos = i
			return
		}
	}
	s.pos = i
}

func (s *scanner) describe() string {
	if s.pos >= len(s.data) {
		return "end of input"
	}
	c := s.data[s.pos]
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (s *scanner) syntax(msg string) error {
	line, col := lineCol(s.data, s.pos)
	return &SyntaxError{File: s.file, Offset: s.pos, Line: line, Column: col, Path: renderPath(s.data, s.path), Msg: msg}
}

func (s *scanner) modelErr(msg string) error {
	return &ModelError{File: s.file, Path: renderPath(s.data, s.path), Msg: msg}
}

// value reads any JSON value at s.pos (after white space) and records
// objects and string values.
func (s *scanner) value() error {
	if s.pos >= len(s.data) {
		return s.syntax("unexpected end of input; expected a value")
	}
	switch c := s.data[s.pos]; c {
	case '{':
		return s.object()
	case '[':
		return s.array()
	case '"':
		start := s.pos
		n, esc, err := s.string()
		if err != nil {
			return err
		}
		if s.inHeader > 0 {
			return nil
		}
		if esc {
			n |= strFlagEscaped
		}
		if len(s.idx.strs) == cap(s.idx.strs) {
			s.idx.strs = grow(s.idx.strs, 1, s.pos, len(s.data))
		}
		s.idx.strs = append(s.idx.strs, strVal{off: int32(start), n: n})
		return nil
	default:
		return s.scalar()
	}
}

// scalar reads a number, true, false or null.
func (s *scanner) scalar() error {
	switch s.data[s.pos] {
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return s.number()
	}
	return s.syntax(fmt.Sprintf("unexpected %s; expected a value", s.describe()))
}

func (s *scanner) literal(lit string) error {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return s.syntax(fmt.Sprintf("unexpected %s; expected %s", s.describe(), lit))
	}
	s.pos += len(lit)
	return nil
}

func (s *scanner) digits() int {
	n := 0
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
		n++
	}
	return n
}

func (s *scanner) number() error {
	if s.data[s.pos] == '-' {
		s.pos++
	}
	if s.pos < len(s.data) && s.data[s.pos] == '0' {
		s.pos++
	} else if s.digits() == 0 {
		return s.syntax(fmt.Sprintf("unexpected %s in a number; expected a digit", s.describe()))
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if s.digits() == 0 {
			return s.syntax(fmt.Sprintf("unexpected %s after a decimal point; expected a digit", s.describe()))
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if s.digits() == 0 {
			return s.syntax(fmt.Sprintf("unexpected %s in an exponent; expected a digit", s.describe()))
		}
	}
	return nil
}

// plain[c] is true for bytes that need no attention inside a string:
// printable ASCII but the quote and the backslash. DEL is noted (see
// scanner.high); bytes of 0x80 and above start a multi-byte sequence that
// is checked to be UTF-8.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// string reads a string at s.pos (on its opening quote) and returns the
// raw length between the quotes and whether it holds escapes. The string
// must be UTF-8 (RFC 8259 section 8.1): overlong forms, surrogates encoded
// in UTF-8 and stray bytes are a *SyntaxError. Only non-ASCII bytes are
// decoded, so that ASCII text costs nothing more.
func (s *scanner) string() (n uint32, escaped bool, err error) {
	start := s.pos + 1
	i := start
	data := s.data
	s.high = false
	for {
		// Eight bytes at a time while none is a quote, a backslash, a
		// control character, DEL or non-ASCII, then byte by byte.
		for i+8 <= len(data) {
			x := binary.LittleEndian.Uint64(data[i:])
			if m := swar.HasByte(x, '"') | swar.HasByte(x, '\\') | swar.HasLess(x, 0x20) | swar.HasAbove(x); m != 0 {
				// The lowest flag is exact (the tests' borrows and
				// carries run upward): go straight to that byte.
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(data) && plain[data[i]] {
			i++
		}
		if i >= len(data) {
			s.pos = i
			return 0, false, s.syntax("unexpected end of input in a string; expected '\"'")
		}
		switch c := data[i]; {
		case c == 0x7f:
			s.high = true
			i++
		case c >= utf8.RuneSelf:
			s.high = true
			for i < len(data) && data[i] >= utf8.RuneSelf {
				r, size := utf8.DecodeRune(data[i:])
				if r == utf8.RuneError && size == 1 {
					s.pos = i
					return 0, false, s.syntax(invalidUTF8(data[i:]))
				}
				i += size
			}
		case c == '"':
			s.pos = i + 1
			return uint32(i - start), escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(data) {
				s.pos = i + 1
				return 0, false, s.syntax("unexpected end of input in a string escape")
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) || !isHex(data[i+2]) || !isHex(data[i+3]) || !isHex(data[i+4]) || !isHex(data[i+5]) {
					s.pos = i
					return 0, false, s.syntax(`invalid \u escape in a string; expected four hex digits`)
				}
				i += 6
			default:
				s.pos = i
				return 0, false, s.syntax(fmt.Sprintf("invalid escape \\%c in a string", data[i+1]))
			}
		default:
			s.pos = i
			return 0, false, s.syntax(fmt.Sprintf("control character 0x%02x in a string; it must be escaped", c))
		}
	}
}

// invalidUTF8 describes the invalid UTF-8 sequence at the start of b.
func invalidUTF8(b []byte) string {
	n := 1
	for n < len(b) && n < 4 && b[n]&0xc0 == 0x80 {
		n++
	}
	return fmt.Sprintf("invalid UTF-8 (bytes % x) in a string; a JSON text must be UTF-8 (RFC 8259 section 8.1): no stray bytes, overlong forms or encoded surrogates", b[:n])
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (s *scanner) enter() error {
	s.depth++
	if s.depth > MaxDepth {
		return s.modelErr(fmt.Sprintf("nesting deeper than %d levels; a Murano model nests far less", MaxDepth))
	}
	return nil
}

func (s *scanner) array() error {
	if err := s.enter(); err != nil {
		return err
	}
	s.pos++ // '['
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		s.depth--
		return nil
	}
	seg := len(s.path)
	s.path = append(s.path, -1)
	for i := int32(0); ; i++ {
		s.path[seg] = -(i + 1)
		s.ws()
		if err := s.value(); err != nil {
			return err
		}
		more, err := s.more(']')
		if err != nil {
			return err
		}
		if !more {
			s.path = s.path[:seg]
			s.depth--
			return nil
		}
	}
}

// key reads an object key and returns its raw span (between the quotes).
func (s *scanner) key() (start, end int, escaped bool, err error) {
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		return 0, 0, false, s.syntax(fmt.Sprintf("unexpected %s; expected a string key", s.describe()))
	}
	start = s.pos + 1
	n, esc, err := s.string()
	if err != nil {
		return 0, 0, false, err
	}
	s.ws()
	if s.pos >= len(s.data) || s.data[s.pos] != ':' {
		return 0, 0, false, s.syntax(fmt.Sprintf("unexpected %s after a key; expected ':'", s.describe()))
	}
	s.pos++
	s.ws()
	return start, start + int(n), esc, nil
}

func (s *scanner) object() error {
	if err := s.enter(); err != nil {
		return err
	}
	start := s.pos
	s.pos++ // '{'
	base := len(s.pending)
	kbase := len(s.keys)
	seg := len(s.path)
	s.path = append(s.path, 0)
	var h header
	hasHeader, anchored := false, false
	depth := s.depth
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
	} else {
		for {
			s.path[seg] = 0 // no key read yet
			ks, ke, kesc, err := s.key()
			if err != nil {
				return err
			}
			s.path[seg] = int32(ks - 1)
			s.keys = append(s.keys, s.keyHash(ks, ke, kesc))
			if s.inHeader == 0 && (ke-ks == 1 && s.data[ks] == '?' || kesc && unescape(s.data[ks-1:ke+1]) == "?") {
				if hasHeader {
					return s.modelErr(`duplicate "?" key: an object has one header`)
				}
				if s.pos >= len(s.data) || s.data[s.pos] != '{' {
					if s.pos < len(s.data) && s.data[s.pos] != '{' {
						if err := s.value(); err != nil {
							return err
						}
					}
					return s.modelErr(`the header must be a JSON object`)
				}
				hasHeader = true
				if err := s.header(&h); err != nil {
					return err
				}
				if anchored = s.mayAnchor(seg); anchored {
					s.anchors = append(s.anchors, int32(seg))
				}
			} else {
				var keys *[]keySpan
				switch {
				case s.inHeader > 0:
				case depth == 1:
					keys = &s.idx.rootKeys
				case depth == 2 && s.inModel:
					keys = &s.idx.taskKeys
				}
				adopted := false
				if keys != nil {
					k := s.noteKey(keys, ks, ke, kesc)
					if depth == 1 {
						s.inModel = k == "model"
					}
					if s.parallel && (k == "Objects" || k == "ObjectsCopy") && s.pos < len(s.data) && (s.data[s.pos] == '[' || s.data[s.pos] == '{') {
						if sub := s.guessed(ks - 1); sub != nil && sub.start == s.pos {
							// The reading reached the key whose value was
							// scanned on a guess: the guess held, the value
							// is read, go on after it.
							s.wait()
							<-sub.done
							s.resume()
							sub.adopted = true
							if sub.err != nil {
								return sub.err // scanWith scans again in one pass
							}
							sub.end = sub.pos
							s.pos, adopted = sub.pos, true
						} else if !s.speculated {
							s.speculated = true
							s.speculate(k)
						}
					}
				}
				if !adopted {
					if err := s.value(); err != nil {
						return err
					}
				}
				if keys != nil {
					ksp := &(*keys)[len(*keys)-1]
					ksp.end = int32(s.pos)
					ksp.null = s.data[ksp.start] == 'n'
					if depth == 1 {
						s.inModel = false
					}
				}
			}
			more, err := s.more('}')
			if err != nil {
				return err
			}
			if !more {
				break
			}
		}
	}
	if err := s.uniqueKeys(start, kbase, seg); err != nil {
		return err
	}
	s.path = s.path[:seg]
	s.depth--
	if !hasHeader {
		return nil
	}
	if anchored {
		s.anchors = s.anchors[:len(s.anchors)-1]
	}
	pre := 0
	if len(s.anchors) > 0 {
		pre = int(s.anchors[len(s.anchors)-1])
	}
	rel := s.path[pre:]
	i := int32(len(s.idx.objects))
	segLo := int32(len(s.idx.segs))
	if cap(s.idx.segs)-len(s.idx.segs) < len(rel) {
		s.idx.segs = grow(s.idx.segs, len(rel), s.pos, len(s.data))
	}
	for _, seg := range rel {
		if seg > 0 {
			seg = s.canonKey(seg)
		}
		s.idx.segs = append(s.idx.segs, seg)
	}
	if len(s.idx.objects) == cap(s.idx.objects) {
		s.idx.objects = grow(s.idx.objects, 1, s.pos, len(s.data))
	}
	o := Object{
		id:    s.idRef(h.id),
		typ:   h.typ,
		Start: int32(start),
		End:   int32(s.pos),
		encl:  -1,
		segLo: segLo,
		bits:  uint16(pre), // MaxDepth fits segPreMask
	}
	if h.hasID {
		o.bits |= bitHasID
	}
	if h.destroyed {
		o.bits |= bitDestroyed
	}
	if legacy := s.legacy(&h); legacy != 0 || h.depHi > h.depLo {
		s.idx.exts = append(s.idx.exts, objExt{legacy: legacy, deps: depSpan{h.depLo, h.depHi}})
		o.ext = int32(len(s.idx.exts))
	}
	if off := h.start - start; off < hdrFar {
		o.hdr = uint16(off)
	} else {
		o.hdr = hdrFar
		if s.idx.farHeaders == nil {
			s.idx.farHeaders = map[int32]int32{}
		}
		s.idx.farHeaders[int32(start)] = int32(h.start)
	}
	s.idx.objects = append(s.idx.objects, o)
	for _, c := range s.pending[base:] {
		s.idx.objects[c].encl = i
	}
	if i%releaseEvery == 0 {
		s.doc.release()
		if s.abandon != nil && s.abandon.Load() {
			return errAbandoned
		}
	}
	s.pending = append(s.pending[:base], i)
	return nil
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

// wait notes that the scanner waits for the scans it started, and is no
// reader of the document meanwhile (Document.reading); resume, that it
// reads again.
func (s *scanner) wait() {
	if !s.waiting {
		s.waiting = true
		s.doc.leaving()
	}
}

func (s *scanner) resume() {
	if s.waiting {
		s.waiting = false
		s.doc.reading()
	}
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

// more reads what follows a member of an object (close is '}') or an item
// of an array (close is ']'): true after a ',' and the white space after
// it, false after the closing bracket, an error naming what was expected
// otherwise.
func (s *scanner) more(close byte) (bool, error) {
	s.ws()
	if s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ',':
			s.pos++
			s.ws()
			return true, nil
		case close:
			s.pos++
			return false, nil
		}
	}
	in := "an object"
	if close == ']' {
		in = "an array"
	}
	if s.pos >= len(s.data) {
		return false, s.syntax(fmt.Sprintf("unexpected end of input in %s; expected ',' or '%c'", in, close))
	}
	return false, s.syntax(fmt.Sprintf("unexpected %s in %s; expected ',' or '%c'", s.describe(), in, close))
}
