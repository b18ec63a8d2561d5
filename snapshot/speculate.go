package snapshot

import (
	"bytes"
	"errors"
	"sync/atomic"

	"github.com/objgc/objgc/internal/jsonedit"
)

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

// envelopeMember reads the value of the member of an envelope (the root,
// or an engine task's "model") whose key is data[ks:ke], noting the key
// in keys: the envelope's trees are found from them (parse). The value of
// "Objects" or "ObjectsCopy" is either read already by a scan started on
// a guess (speculate), which this reading adopts once it reaches that very
// key, or read here, after starting that scan for the other tree.
func (s *scanner) envelopeMember(keys *[]keySpan, ks, ke int, kesc bool, depth int) error {
	k := s.noteKey(keys, ks, ke, kesc)
	if depth == 1 {
		s.inModel = k == "model"
	}
	adopted := false
	if s.parallel && (k == "Objects" || k == "ObjectsCopy") && s.pos < len(s.data) && (s.data[s.pos] == '[' || s.data[s.pos] == '{') {
		if sub := s.guessed(ks - 1); sub != nil && sub.start == s.pos {
			// The reading reached the key whose value was scanned on a
			// guess: the guess held, the value is read, go on after it.
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
	if !adopted {
		if err := s.value(); err != nil {
			return err
		}
	}
	ksp := &(*keys)[len(*keys)-1]
	ksp.end = int32(s.pos)
	ksp.null = s.data[ksp.start] == 'n'
	if depth == 1 {
		s.inModel = false
	}
	return nil
}
