package planfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/internal/swar"
	"github.com/objgc/objgc/internal/termsafe"
)

// WriteJSON writes the saved plan sp as JSON (WriteJSON): objgc show
// --format json.
func (sp *File) WriteJSON(w io.Writer) error { return WriteJSON(w, sp.View()) }

// Array is the saved plan sp as a View: the read-only view of a plan
// that every format writes from, a saved plan's as a fresh one's.
func (sp *File) View() *View {
	of := func(n int, isNil bool) Array { return Array{N: n, Null: isNil} }
	return &View{
		Head:   *sp,
		Groups: of(len(sp.Groups), sp.Groups == nil),
		Group: func(k int) (int, Array) {
			g := &sp.Groups[k]
			return g.Index, of(len(g.Objects), g.Objects == nil)
		},
		Object:        func(k, j int) Object { return sp.Groups[k].Objects[j] },
		Notifications: of(len(sp.Notifications), sp.Notifications == nil),
		Notification:  func(i int) Notification { return sp.Notifications[i] },
		Cycles:        of(len(sp.Cycles), sp.Cycles == nil),
		Cycle:         func(i int) []string { return sp.Cycles[i] },
		Dropped:       of(len(sp.Dropped), sp.Dropped == nil),
		DroppedAt:     func(i int) Dropped { return sp.Dropped[i] },
		Warnings:      of(len(sp.Warnings), sp.Warnings == nil),
		Warning:       func(i int) order.Warning { return sp.Warnings[i] },
	}
}

// Array is the length of one of a plan's arrays; Null: it is absent
// (nil), written null as encoding/json writes a nil slice.
type Array struct {
	N    int
	Null bool
}

// View is a read-only view of a plan, element by element: a plan
// being made (objgc plan) or a saved one (File.Array). Every output
// format writes from it, WriteJSON and objgc's text, dot and Markdown
// writers alike, so that plan and show write each format once.
type View struct {
	// Head holds the fields before the groups and the summary; its
	// arrays are not read.
	Head          File
	Groups        Array
	Group         func(k int) (index int, objects Array)
	Object        func(k, j int) Object // object j of group k
	Notifications Array
	Notification  func(i int) Notification
	Cycles        Array
	Cycle         func(i int) []string
	Dropped       Array
	DroppedAt     func(i int) Dropped
	Warnings      Array
	Warning       func(i int) order.Warning
	// Base, when set, is the absolute directory of the plan file
	// written: every path under it is written relative to it
	// (paths.go).
	Base string
	// Parallel, when set, writes to w what render writes for each of n
	// elements, in order, rendering them on several goroutines (the
	// objects and notifications of a large plan); nil: one by one.
	Parallel func(w io.Writer, n int, render func(b *bytes.Buffer, i int)) error
}

// WriteJSON is the one encoder of the JSON plan (docs/plan-format.md):
// the bytes encoding/json writes of the whole File (indented
// by two spaces, HTML characters not escaped), unprintable runes as \u
// escapes, streamed one element of the groups, objects, notifications,
// cycles, dropped and warnings arrays at a time through a buffer of 64
// KiB, the objects and notifications rendered in parallel by the hand
// encoder (appendPlanObject). Its memory is that of the largest element,
// not of the plan.
func WriteJSON(w io.Writer, e *View) error {
	s := newJSONStream(w)
	s.parallel = e.Parallel
	var m *pathMapper
	if e.Base != "" {
		m = &pathMapper{base: filepath.Clean(e.Base)}
	}
	s.raw("{\n")
	s.field("format_version", e.Head.FormatVersion)
	s.field("inputs", m.inputs(e.Head.Inputs))
	s.field("on_dangling", e.Head.OnDangling)
	s.field("no_hooks", e.Head.NoHooks)
	s.field("require_hooks", e.Head.RequireHooks)
	s.field("hooks_dirs", m.paths(e.Head.HooksDirs))
	s.field("cache_dir", m.path(e.Head.CacheDir))
	s.field("packages", e.Head.Packages)
	s.key("groups")
	s.array("  ", e.Groups, func(prefix string, k int) {
		index, objects := e.Group(k)
		s.raw("{\n" + prefix + "  \"index\": " + strconv.Itoa(index) + ",\n" + prefix + "  \"objects\": ")
		s.parallelArray(prefix+"  ", objects, func(b []byte, prefix string, j int) []byte {
			po := e.Object(k, j)
			po.Hooks = m.hookList(po.Hooks)
			return appendPlanObject(b, prefix, &po)
		})
		s.raw("\n" + prefix + "}")
	})
	s.raw(",\n")
	s.key("notifications")
	s.parallelArray("  ", e.Notifications, func(b []byte, prefix string, i int) []byte {
		pn := e.Notification(i)
		pn.Hook, pn.OldPlaces = m.hook(pn.Hook), m.paths(pn.OldPlaces)
		return appendPlanNotification(b, prefix, &pn)
	})
	s.raw(",\n")
	s.key("cycles")
	s.array("  ", e.Cycles, func(prefix string, i int) { s.value(prefix, e.Cycle(i)) })
	s.raw(",\n")
	s.key("dropped")
	s.array("  ", e.Dropped, func(prefix string, i int) { s.value(prefix, e.DroppedAt(i)) })
	s.raw(",\n")
	s.key("warnings")
	s.array("  ", e.Warnings, func(prefix string, i int) { s.value(prefix, e.Warning(i)) })
	s.raw(",\n")
	s.key("summary")
	s.value("  ", e.Head.Summary)
	s.raw("\n}\n")
	return s.flush()
}

// jsonStream writes indented JSON piece by piece: fixed keys and
// punctuation as they are, each value through encoding/json (indented by
// two spaces after a prefix, HTML characters not escaped) and
// termsafe.JSON, as cmd writes a whole value (writeJSON). The first error
// stops it; flush returns it.
type jsonStream struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder
	err error
	// parallel renders parallelArray's elements (View.Parallel).
	parallel func(w io.Writer, n int, render func(b *bytes.Buffer, i int)) error
}

func newJSONStream(w io.Writer) *jsonStream {
	s := &jsonStream{w: bufio.NewWriterSize(w, 64<<10)}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	return s
}

func (s *jsonStream) raw(t string) {
	if s.err == nil {
		_, s.err = s.w.WriteString(t)
	}
}

// key writes a key of the root object (keys are fixed ASCII names).
func (s *jsonStream) key(k string) { s.raw("  \"" + k + "\": ") }

// field writes a key of the root object, its value and a comma.
func (s *jsonStream) field(k string, v any) {
	s.key(k)
	s.value("  ", v)
	s.raw(",\n")
}

// value writes v as encoding/json indents it at prefix.
func (s *jsonStream) value(prefix string, v any) {
	if s.err != nil {
		return
	}
	s.buf.Reset()
	s.enc.SetIndent(prefix, "  ")
	if s.err = s.enc.Encode(v); s.err != nil {
		return
	}
	b := bytes.TrimSuffix(s.buf.Bytes(), []byte("\n"))
	_, s.err = s.w.Write(termsafe.JSON(b))
}

// array writes an array of a.N elements whose brackets sit at prefix;
// elem writes element i, its first line already indented, at the prefix
// it is given. Empty, it is [], and null when a.Null, as encoding/json
// writes them.
func (s *jsonStream) array(prefix string, a Array, elem func(prefix string, i int)) {
	n := a.N
	switch {
	case a.Null:
		s.raw("null")
		return
	case n == 0:
		s.raw("[]")
		return
	}
	s.raw("[\n")
	inner := deeper(prefix)
	for i := range n {
		if i > 0 {
			s.raw(",\n")
		}
		s.raw(inner)
		if s.err != nil {
			return
		}
		elem(inner, i)
	}
	s.raw("\n" + prefix + "]")
}

// parallelArray is array for a.N elements that elem appends, as value would
// write them (elem appends element i's JSON, its first line already
// indented, at the prefix it is given): the elements are rendered on
// several goroutines (renderOrdered) and passed through termsafe.JSON as
// value passes its values. elem must be safe to call from several
// goroutines at once.
func (s *jsonStream) parallelArray(prefix string, a Array, elem func(b []byte, prefix string, i int) []byte) {
	n := a.N
	switch {
	case a.Null:
		s.raw("null")
		return
	case n == 0:
		s.raw("[]")
		return
	}
	s.raw("[\n")
	if s.err != nil {
		return
	}
	inner := deeper(prefix)
	bufs := sync.Pool{New: func() any { return new([]byte) }}
	render := func(b *bytes.Buffer, i int) {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(inner)
		e := bufs.Get().(*[]byte)
		*e = elem((*e)[:0], inner, i)
		b.Write(termsafe.JSON(*e))
		bufs.Put(e)
	}
	parallel := s.parallel
	if parallel == nil {
		parallel = oneByOne
	}
	if err := parallel(s.w, n, render); s.err == nil {
		s.err = err
	}
	s.raw("\n" + prefix + "]")
}

func (s *jsonStream) flush() error {
	if s.err != nil {
		return s.err
	}
	return s.w.Flush()
}

// oneByOne writes to w what render writes for each element 0 to n-1, in
// order, through a buffer written out every 64 KiB: View.Parallel
// on one goroutine.
func oneByOne(w io.Writer, n int, render func(b *bytes.Buffer, i int)) error {
	var b bytes.Buffer
	for i := range n {
		render(&b, i)
		if b.Len() >= 64<<10 || i == n-1 {
			if _, err := w.Write(b.Bytes()); err != nil {
				return err
			}
			b.Reset()
		}
	}
	return nil
}

// indentSpaces holds the indentations of the plan's JSON, up to 64 spaces.
const indentSpaces = "                                                                "

// deeper returns prefix with two more spaces: a piece of indentSpaces for a
// prefix of spaces, as every prefix of the plan's JSON is, so that the
// writing of each object does not make its indentations anew (new strings
// for every object of the plan).
func deeper(prefix string) string {
	if n := len(prefix) + 2; n <= len(indentSpaces) && prefix == indentSpaces[:len(prefix)] {
		return indentSpaces[:n]
	}
	return prefix + "  "
}

// appendPlanObject appends po as encoding/json writes it indented by two
// spaces after prefix, with HTML characters not escaped (jsonStream.value):
// the same bytes, written directly. A plan of a hundred thousand objects
// spent most of its writing time in encoding/json, reflecting on the struct
// and indenting the encoded bytes a second time. Field order, omitempty and
// null follow Object's tags; TestAppendPlanObject compares the
// two on every kind of value.
func appendPlanObject(b []byte, prefix string, po *Object) []byte {
	in := deeper(prefix)
	b = append(b, "{\n"...)
	b = appendField(b, in, "id", po.ID, true)
	b = appendField(b, in, "type", po.Type, true)
	b = appendField(b, in, "path", po.Path, true)
	b = appendNullable(b, in, "owner", po.Owner, true)
	b = appendKey(b, in, "reasons")
	b = appendArray(b, in, po.Reasons == nil, len(po.Reasons), func(b []byte, p string, i int) []byte {
		r := po.Reasons[i]
		b = append(b, "{\n"...)
		pi := deeper(p)
		b = appendField(b, pi, "code", string(r.Code), r.ID != "" || r.Handler != "")
		if r.ID != "" {
			b = appendField(b, pi, "id", r.ID, r.Handler != "")
		}
		if r.Handler != "" {
			b = appendField(b, pi, "handler", r.Handler, false)
		}
		return append(append(b, p...), '}')
	})
	b = append(b, ",\n"...)
	b = appendKey(b, in, "type_ref")
	b = appendPlanType(b, in, po.TypeRef)
	b = append(b, ",\n"...)
	b = appendKey(b, in, "classes")
	b = appendArray(b, in, po.Classes == nil, len(po.Classes), func(b []byte, _ string, i int) []byte {
		return appendString(b, po.Classes[i])
	})
	b = append(b, ",\n"...)
	b = appendNullable(b, in, "package", po.Package, true)
	b = appendKey(b, in, "hooks")
	b = appendArray(b, in, po.Hooks == nil, len(po.Hooks), func(b []byte, p string, i int) []byte {
		return appendPlanHook(b, p, &po.Hooks[i])
	})
	b = append(b, '\n')
	b = append(b, prefix...)
	return append(b, '}')
}

// appendPlanNotification appends pn as appendPlanObject appends an object:
// the bytes encoding/json writes for it (TestAppendPlanNotification). A
// plan of ten thousand notifications spent a tenth of a second encoding
// them on one core.
func appendPlanNotification(b []byte, prefix string, pn *Notification) []byte {
	in := deeper(prefix)
	b = append(b, "{\n"...)
	b = appendKey(b, in, "group")
	b = strconv.AppendInt(b, int64(pn.Group), 10)
	b = append(b, ",\n"...)
	b = appendField(b, in, "publisher", pn.Publisher, true)
	b = appendField(b, in, "subscriber", pn.Subscriber, true)
	b = appendKey(b, in, "subscriber_type_ref")
	if pn.SubscriberTypeRef == nil {
		b = append(b, "null"...)
	} else {
		b = appendPlanType(b, in, *pn.SubscriberTypeRef)
	}
	b = append(b, ",\n"...)
	b = appendField(b, in, "handler", pn.Handler, true)
	b = appendKey(b, in, "hook")
	if pn.Hook == nil {
		b = append(b, "null"...)
	} else {
		b = appendPlanHook(b, in, pn.Hook)
	}
	if len(pn.OldPlaces) > 0 {
		b = append(b, ",\n"...)
		b = appendKey(b, in, "old_places")
		b = appendArray(b, in, false, len(pn.OldPlaces), func(b []byte, _ string, i int) []byte {
			return appendString(b, pn.OldPlaces[i])
		})
	}
	b = append(b, '\n')
	b = append(b, prefix...)
	return append(b, '}')
}

// appendPlanHook appends h, an object whose sha256 and error are omitted
// when empty, its braces at prefix.
func appendPlanHook(b []byte, prefix string, h *Hook) []byte {
	in := deeper(prefix)
	b = append(b, "{\n"...)
	b = appendField(b, in, "event", h.Event, true)
	b = appendField(b, in, "class", h.Class, true)
	b = appendField(b, in, "path", h.Path, h.SHA256 != "" || h.Error != "" || h.RunAs != "")
	if h.SHA256 != "" {
		b = appendField(b, in, "sha256", h.SHA256, h.Error != "" || h.RunAs != "")
	}
	if h.Error != "" {
		b = appendField(b, in, "error", h.Error, h.RunAs != "")
	}
	if h.RunAs != "" {
		b = appendField(b, in, "run_as", h.RunAs, false)
	}
	b = append(b, prefix...)
	return append(b, '}')
}

// appendPlanType appends t, an object whose version and package are
// omitted when empty, indented at prefix.
func appendPlanType(b []byte, prefix string, t Type) []byte {
	in := deeper(prefix)
	b = append(b, "{\n"...)
	b = appendField(b, in, "name", t.Name, t.Version != "" || t.Package != "")
	if t.Version != "" {
		b = appendField(b, in, "version", t.Version, t.Package != "")
	}
	if t.Package != "" {
		b = appendField(b, in, "package", t.Package, false)
	}
	b = append(b, prefix...)
	return append(b, '}')
}

// appendField appends `prefix"key": "v"`, a comma when more follows, and
// a newline.
func appendField(b []byte, prefix, key, v string, more bool) []byte {
	b = appendKey(b, prefix, key)
	b = appendString(b, v)
	if more {
		b = append(b, ',')
	}
	return append(b, '\n')
}

// appendKey appends `prefix"key": `, a member's key at its indentation;
// key needs no escaping (the plan's own field names).
func appendKey(b []byte, prefix, key string) []byte {
	b = append(b, prefix...)
	b = append(b, '"')
	b = append(b, key...)
	return append(b, `": `...)
}

// appendNullable is appendField for a *string: null when nil.
func appendNullable(b []byte, prefix, key string, v *string, more bool) []byte {
	if v != nil {
		return appendField(b, prefix, key, *v, more)
	}
	b = appendKey(b, prefix, key)
	b = append(b, "null"...)
	if more {
		b = append(b, ',')
	}
	return append(b, '\n')
}

// appendArray appends an array of n elements whose brackets sit at prefix
// (null for a nil slice, [] for an empty one); elem appends element i, its
// first line already indented, at the prefix it is given.
func appendArray(b []byte, prefix string, isNil bool, n int, elem func(b []byte, prefix string, i int) []byte) []byte {
	switch {
	case isNil:
		return append(b, "null"...)
	case n == 0:
		return append(b, "[]"...)
	}
	in := deeper(prefix)
	b = append(b, "[\n"...)
	for i := range n {
		if i > 0 {
			b = append(b, ",\n"...)
		}
		b = append(b, in...)
		b = elem(b, in, i)
	}
	b = append(b, '\n')
	b = append(b, prefix...)
	return append(b, ']')
}

// appendString appends s as a JSON string as encoding/json writes it with
// HTML characters not escaped: printable ASCII other than '"' and '\\' as
// it is (ids, types and paths are), anything else through encoding/json.
func appendString(b []byte, s string) []byte {
	i := 0
	// Eight bytes at a time: a JSON plan is mostly ids, types and paths.
	for ; i+8 <= len(s); i += 8 {
		x := swar.Load8(s, i)
		if swar.HasLess(x, 0x20)|swar.HasAbove(x)|swar.HasByte(x, '"')|swar.HasByte(x, '\\') != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return appendMarshaled(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendMarshaled(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err) // a string always encodes
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
