package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync/atomic"
	"unicode/utf8"

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
	// keys holds a keyHash of each of the first keys read of the JSON
	// objects still open, innermost last (keySet).
	keys []uint64
	idx  flatIndex

	doc *Document // released every releaseEvery objects
	// parallel lets the scanner hand the value of an envelope's other
	// tree to a scanner of its own (speculate).
	parallel bool
	types    map[string]int32     // the index's table of types (typeRef)
	keyOffs  map[string]recentKey // first offset of each key in keySegs (canonKey)
	// lastKey is the last offset canonKey was given, lastCanon what it
	// returned.
	lastKey, lastCanon int32
	// recentKeys holds keys canonKey recorded, by recentSlot.
	recentKeys [recentKeysLen]recentKey
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

var utf8BOM = []byte{0xef, 0xbb, 0xbf}

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

// objKey is an object key as the reader read it: its raw span
// data[start:end] between the quotes, whether that holds escapes, and its
// keyHash, which the duplicate check and the header's dispatch compare.
type objKey struct {
	start, end int
	hash       uint64
	escaped    bool
}

// key reads an object key, the ':' after it and the white space around
// that, and leaves s.pos on the value.
func (s *scanner) key() (objKey, error) {
	data, q := s.data, s.pos
	var k objKey
	if q+9 <= len(data) && data[q] == '"' {
		// Most keys are short and plain: the word after the quote holds
		// the key and its closing quote, and is the key's keyHash once
		// its bytes past the key are cleared. The lowest flag of m is bit
		// 7 of the first byte flagged, n bytes into the word: tz is 8n+7.
		x := binary.LittleEndian.Uint64(data[q+1:])
		m := swar.HasByte(x, '"') | swar.HasByte(x, '\\') | swar.HasLess(x, 0x20) | swar.HasAbove(x)
		tz := uint(bits.TrailingZeros64(m))
		if n := int(tz >> 3); m != 0 && data[q+1+n] == '"' {
			k = objKey{start: q + 1, end: q + 1 + n, hash: x&(1<<(tz&56)-1) | uint64(n)<<56}
			s.pos = k.end + 1
		}
	}
	if k.start == 0 { // not a short plain key
		if q >= len(data) || data[q] != '"' {
			return objKey{}, s.syntax(fmt.Sprintf("unexpected %s; expected a string key", s.describe()))
		}
		n, esc, err := s.string()
		if err != nil {
			return objKey{}, err
		}
		k = objKey{start: q + 1, end: q + 1 + int(n), escaped: esc}
		k.hash = s.keyHash(k.start, k.end, esc)
	}
	// The ':' is most often followed by one space or none, then the value
	// (a byte above ' ', never white space).
	if p := s.pos; p+2 < len(data) && data[p] == ':' {
		if data[p+1] > ' ' {
			s.pos = p + 1
			return k, nil
		}
		if data[p+1] == ' ' && data[p+2] > ' ' {
			s.pos = p + 2
			return k, nil
		}
	}
	s.ws()
	if s.pos >= len(data) || data[s.pos] != ':' {
		return objKey{}, s.syntax(fmt.Sprintf("unexpected %s after a key; expected ':'", s.describe()))
	}
	s.pos++
	s.ws()
	return k, nil
}

func (s *scanner) object() error {
	if err := s.enter(); err != nil {
		return err
	}
	start := s.pos
	s.pos++ // '{'
	base := len(s.pending)
	kset := s.openKeys()
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
			k, err := s.key()
			if err != nil {
				return err
			}
			s.path[seg] = int32(k.start - 1)
			isHeader := s.inHeader == 0 && k.hash == headerKey
			if isHeader && hasHeader {
				return s.modelErr(`duplicate "?" key: an object has one header`)
			}
			if !s.newKey(&kset, k.hash) {
				if err := s.addKey(&kset, start, seg, k); err != nil {
					return err
				}
			}
			if isHeader {
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
				if keys == nil {
					err = s.value()
				} else {
					err = s.envelopeMember(keys, k.start, k.end, k.escaped, depth)
				}
				if err != nil {
					return err
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
	s.closeKeys(&kset)
	s.path = s.path[:seg]
	s.depth--
	if !hasHeader {
		return nil
	}
	if anchored {
		s.anchors = s.anchors[:len(s.anchors)-1]
	}
	return s.record(&h, start, base)
}

// record records the object that closed at s.pos, opened at start, with
// header h: its path segments from its anchor's, its entry in the
// objects array, and the enclosing object of the objects pending since
// base (those it encloses); it is then pending itself.
func (s *scanner) record(h *header, start, base int) error {
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
	if legacy := s.legacy(h); legacy != 0 || h.depHi > h.depLo {
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
	// Shortened, then appended to: the slice's own pointer is stored back
	// only when it grows, and with it the write barrier that storing a
	// pointer into the heap takes while the collector runs.
	s.pending = s.pending[:base]
	s.pending = append(s.pending, i)
	return nil
}

// more reads what follows a member of an object (close is '}') or an item
// of an array (close is ']'): true after a ',' and the white space after
// it, false after the closing bracket, an error naming what was expected
// otherwise.
func (s *scanner) more(close byte) (bool, error) {
	// Most often the value is followed by ", " and the next one's first
	// byte (above ' ', never white space), or by the closing bracket.
	if p := s.pos; p+2 < len(s.data) {
		switch s.data[p] {
		case ',':
			if s.data[p+1] == ' ' && s.data[p+2] > ' ' {
				s.pos = p + 2
				return true, nil
			}
		case close:
			s.pos = p + 1
			return false, nil
		}
	}
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
