package jsonedit

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
)

// Writer is where a Rewriter writes: *bytes.Buffer and *bufio.Writer are
// ones. Its methods' errors are not looked at while a value is written;
// a *bufio.Writer keeps the first one and returns it from Flush, and the
// caller checks it there.
type Writer interface {
	io.Writer
	io.ByteWriter
	io.StringWriter
}

// Rewriter writes a JSON value with edits at the offsets where values
// start; bytes outside the edits are copied unchanged, in document order,
// straight from the data to the Writer: the value is never built whole.
type Rewriter struct {
	data   []byte
	edits  map[int]*Edit
	offs   []int // sorted keys of edits
	sorted bool
}

// Edit is what happens to the value starting at an offset.
type Edit struct {
	Remove bool                           // leave the member out of its container
	Write  func(w Writer, s, e int) error // write in place of data[s:e]
	Adds   []Addition                     // appended to the container starting here
}

// Addition is a member appended to an object (Key set) or an array.
type Addition struct {
	Key   []byte // raw JSON string
	Value func(w Writer) error
}

// NewRewriter returns a Rewriter of the valid JSON data with no edits.
func NewRewriter(data []byte) *Rewriter {
	return &Rewriter{data: data, edits: map[int]*Edit{}}
}

// At returns the edit of the value starting at off, adding an empty one
// if there is none.
func (r *Rewriter) At(off int) *Edit {
	e := r.edits[off]
	if e == nil {
		e = &Edit{}
		r.edits[off] = e
		r.offs = append(r.offs, off)
		r.sorted = false
	}
	return e
}

// within reports whether an edit starts in [s, e).
func (r *Rewriter) within(s, e int) bool {
	if !r.sorted {
		sort.Ints(r.offs)
		r.sorted = true
	}
	k := sort.SearchInts(r.offs, s)
	return k < len(r.offs) && r.offs[k] < e
}

// Each calls f with each offset that has an edit, in ascending order.
func (r *Rewriter) Each(f func(off int, e *Edit)) {
	r.within(0, 0) // sorts the offsets
	for _, off := range r.offs {
		f(off, r.edits[off])
	}
}

// Lookup returns the edit of the value starting at off, or nil.
func (r *Rewriter) Lookup(off int) *Edit { return r.edits[off] }

// Len returns the number of offsets with an edit.
func (r *Rewriter) Len() int { return len(r.edits) }

// Value writes the value data[s:e] with its edits.
func (r *Rewriter) Value(b Writer, s, e int) error {
	if ed := r.edits[s]; ed != nil && ed.Write != nil {
		return ed.Write(b, s, e)
	}
	return r.Inner(b, s, e)
}

// Inner writes the value data[s:e] with the edits inside it, ignoring a
// Write edit at s itself.
func (r *Rewriter) Inner(b Writer, s, e int) error {
	data := r.data
	ed := r.edits[s]
	if (ed == nil || len(ed.Adds) == 0) && !r.within(s+1, e) {
		b.Write(data[s:e])
		return nil
	}
	if c := data[s]; c != '{' && c != '[' {
		b.Write(data[s:e])
		return nil
	}
	var adds []Addition
	if ed != nil {
		adds = ed.Adds
	}
	ms, end := Members(data, s)
	b.WriteByte(data[s])
	kept := 0
	for k, m := range ms {
		if me := r.edits[m.VS]; me != nil && me.Remove {
			continue
		}
		if kept == 0 {
			b.Write(data[ms[0].Lead:ms[0].Start])
		} else {
			b.Write(data[ms[k-1].VE:m.Start])
		}
		b.Write(data[m.Start:m.VS])
		if err := r.Value(b, m.VS, m.VE); err != nil {
			return err
		}
		kept++
	}
	sep, lead := []byte(": "), []byte(" ")
	if len(ms) > 0 {
		if last := ms[len(ms)-1]; len(ms) > 1 || last.Start > last.Lead {
			lead = data[last.Lead:last.Start]
		}
		if data[s] == '{' {
			sep = data[ms[0].KeyEnd:ms[0].VS]
		}
	}
	for _, a := range adds {
		switch {
		case kept > 0:
			b.WriteByte(',')
			b.Write(lead)
		case len(ms) > 0:
			b.Write(data[ms[0].Lead:ms[0].Start])
		}
		if a.Key != nil {
			b.Write(a.Key)
			b.Write(sep)
		}
		if err := a.Value(b); err != nil {
			return err
		}
		kept++
	}
	switch {
	case len(ms) == 0 && kept == 0:
		b.Write(data[s+1 : end])
	case len(ms) > 0 && kept > 0:
		b.Write(data[ms[len(ms)-1].VE:end])
	}
	b.WriteByte(data[end])
	return nil
}

// Member is a member of a JSON object or an element of an array, as
// offsets into the document.
type Member struct {
	Lead   int // start of its leading white space (after the comma or bracket)
	Start  int // the key (object) or the value (array)
	KeyEnd int // just past the key's closing quote
	VS, VE int // the value
}

// Members lists the Members of the (valid) object or array at open and
// returns the offset of its closing bracket.
func Members(data []byte, open int) ([]Member, int) {
	var ms []Member
	closing := byte(']')
	if data[open] == '{' {
		closing = '}'
	}
	lead := open + 1
	pos := WS(data, lead)
	if data[pos] == closing {
		return nil, pos
	}
	for {
		m := Member{Lead: lead, Start: pos, VS: pos}
		if closing == '}' {
			m.KeyEnd = String(data, pos)
			m.VS = WS(data, WS(data, m.KeyEnd)+1)
		}
		m.VE = Value(data, m.VS)
		ms = append(ms, m)
		pos = WS(data, m.VE)
		if pos >= len(data) || data[pos] != ',' {
			return ms, pos
		}
		lead = pos + 1
		pos = WS(data, lead)
	}
}

// KeyIn returns the first of the Members ms of an object with key.
func KeyIn(data []byte, ms []Member, key string) (Member, bool) {
	for _, m := range ms {
		if k, err := DecodeString(data[m.Start:m.KeyEnd]); err == nil && k == key {
			return m, true
		}
	}
	return Member{}, false
}

// IsString reports whether data[s:e] is the JSON string s.
func IsString(data []byte, s, e int, want string) bool {
	if data[s] != '"' {
		return false
	}
	v, err := DecodeString(data[s:e])
	return err == nil && v == want
}

// DecodeString decodes the JSON string raw, quotes included.
func DecodeString(raw []byte) (string, error) {
	if bytes.IndexByte(raw, '\\') < 0 && len(raw) >= 2 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// WriteString writes s to b as a JSON string.
func WriteString(b Writer, s string) error {
	q, err := json.Marshal(s)
	if err != nil {
		return err
	}
	b.Write(q)
	return nil
}
