package destroy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/objgc/objgc/diff"
	"github.com/objgc/objgc/internal/jsonskip"
	"github.com/objgc/objgc/snapshot"
)

// Outcome says what happened to each doomed object of a plan in an apply
// run: the input of WriteBack.
type Outcome struct {
	// Destroyed holds, per Plan.Objects, whether the object is destroyed:
	// every destroy hook succeeded, or --force marked a failed object
	// destroyed. False means failed, blocked or not reached: the object
	// still exists in the world.
	Destroyed []bool
	// Patches are the JSON Merge Patches (RFC 7386) the notify hooks
	// returned, per subscriber id, in the order the hooks ran.
	Patches map[string][]json.RawMessage
}

// RetainedKey is the property under which the write-back keeps a failed or
// blocked object whose snapshot place is gone from the output (see
// docs/writeback.md): an array of objects, on the nearest owner that is
// still in the model, else on the root.
const RetainedKey = "objgcRetained"

// WriteBack writes to w the model `objgc apply` writes back (DESIGN.md
// section 5, docs/writeback.md), as the envelope
//
//	{
//	  "Objects": <objects>,
//	  "ObjectsCopy": <objects copy>,
//	  "Attributes": <attributes>
//	}
//
// followed by a newline: two spaces before each key, the values' bytes as
// built below, unindented.
//
//   - Objects is the incoming model's bytes with the handlers' patches
//     applied to their subscribers, the objects of p.Diff.Dropped removed,
//     and every destroyed object that is still referenced written once, in
//     full (its snapshot bytes, "destroyed": true in its header), at its
//     first reference in document order; its other references stay bare
//     ids.
//   - ObjectsCopy is Objects plus every doomed object that is not
//     destroyed, put back at its snapshot place (same owner, same property
//     path below it) or, when that place is gone, in the RetainedKey array
//     of its nearest owner still present (else of the root).
//   - Attributes is attributes (Murano's rows [objectId, key, value]) less
//     the rows of destroyed objects; missing or null: [].
//
// out.Destroyed must have one entry per p.Objects. A patch must be a JSON
// object and may not set the "?" header at any level where it merges into
// an existing object. Patches for a subscriber that is doomed are not
// applied: the subscriber leaves the model. Unless onDanglingKeep
// (--on-dangling=keep), a dangling reference in the incoming model is an
// error, since apply refuses to run on such a model. Nothing is written
// to w when an error is returned.
func WriteBack(w io.Writer, p *Plan, out Outcome, attributes json.RawMessage, onDanglingKeep bool) error {
	m, err := BuildWriteBack(p, out, attributes, onDanglingKeep)
	if err != nil {
		return err
	}
	if _, err := m.WriteTo(w); err != nil {
		return fmt.Errorf("writing the model: %w", err)
	}
	return nil
}

// WrittenModel is the three values of the envelope WriteBack writes.
type WrittenModel struct {
	Objects, ObjectsCopy, Attributes []byte
}

// Envelope returns the envelope document, in the layout WriteBack
// documents.
func (m *WrittenModel) Envelope() []byte {
	var b bytes.Buffer
	b.Grow(len(m.Objects) + len(m.ObjectsCopy) + len(m.Attributes) + 64)
	m.WriteTo(&b)
	return b.Bytes()
}

// WriteTo writes the envelope to w, without copying the values.
func (m *WrittenModel) WriteTo(w io.Writer) (int64, error) {
	n, err := m.WriteNested(w, "")
	if err != nil {
		return n, err
	}
	k, err := w.Write([]byte("\n"))
	return n + int64(k), err
}

// WriteNested writes the envelope as the value of a member whose line is
// indented by indent (an engine task's "model"): the layout of WriteTo
// with indent before each key and the closing brace, and no final
// newline.
func (m *WrittenModel) WriteNested(w io.Writer, indent string) (int64, error) {
	var n int64
	key := func(name string) []byte { return []byte("\n" + indent + "  \"" + name + "\": ") }
	for _, part := range [][]byte{
		[]byte("{"), key("Objects"), m.Objects,
		[]byte(","), key("ObjectsCopy"), m.ObjectsCopy,
		[]byte(","), key("Attributes"), m.Attributes,
		[]byte("\n" + indent + "}"),
	} {
		k, err := w.Write(part)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// BuildWriteBack computes the values WriteBack writes; see WriteBack.
func BuildWriteBack(p *Plan, out Outcome, attributes json.RawMessage, onDanglingKeep bool) (*WrittenModel, error) {
	if len(out.Destroyed) != len(p.Objects) {
		return nil, fmt.Errorf("write-back: %d destroyed flags for %d doomed objects", len(out.Destroyed), len(p.Objects))
	}
	d := p.Diff
	if !onDanglingKeep && len(d.Dangling) > 0 {
		r := d.Dangling[0]
		referrer := r.ReferrerID
		if referrer == "" {
			referrer = "the model"
		}
		return nil, fmt.Errorf("write-back: %s references doomed object %s at %s (%d dangling references in all); only --on-dangling=keep writes such a model",
			referrer, r.DoomedID, r.Path, len(d.Dangling))
	}
	wb := &writeBack{p: p, d: d, snap: d.Snapshot, in: d.Incoming,
		destroyed: make([]bool, len(d.Snapshot.Objects)), retained: make([]bool, len(d.Snapshot.Objects))}
	for k, pl := range p.Objects {
		if out.Destroyed[k] {
			wb.destroyed[pl.Snapshot] = true
		} else {
			wb.retained[pl.Snapshot] = true
		}
	}
	objects, err := wb.objects(out.Patches)
	if err != nil {
		return nil, err
	}
	cp, err := wb.objectsCopy(objects)
	if err != nil {
		return nil, err
	}
	attrs, err := wb.attributes(attributes, out.Destroyed)
	if err != nil {
		return nil, err
	}
	m := &WrittenModel{Objects: objects, ObjectsCopy: cp, Attributes: attrs}
	for _, part := range []struct {
		name string
		b    []byte
	}{{"Objects", objects}, {"ObjectsCopy", cp}, {"Attributes", attrs}} {
		if !json.Valid(part.b) {
			return nil, fmt.Errorf("write-back: internal error: %s is not valid JSON", part.name)
		}
	}
	return m, nil
}

type writeBack struct {
	p        *Plan
	d        *diff.Result
	snap, in *snapshot.Tree
	// destroyed and retained are by snapshot object index (first copies
	// of doomed objects): destroyed in this run, or still in the world.
	destroyed, retained []bool

	refs     []snapRef // references in the snapshot to destroyed objects
	refsDone bool
}

// snapRef is a reference in the snapshot to an object destroyed in this
// run.
type snapRef struct {
	off    int
	object int32
}

func (wb *writeBack) isDestroyed(i int32) bool { return wb.d.IsDoomed(i) && wb.destroyed[i] }

// objects builds the Objects value.
func (wb *writeBack) objects(patches map[string][]json.RawMessage) ([]byte, error) {
	if wb.in.Null {
		// The environment is deleted: no subscriber is left to patch.
		for _, id := range sortedKeys(patches) {
			if _, ok := wb.snap.Lookup(id); !ok {
				return nil, fmt.Errorf("write-back: patch for subscriber %s: no such object in either model", id)
			}
		}
		return []byte("null"), nil
	}
	t, err := wb.patchAndDrop(patches)
	if err != nil {
		return nil, err
	}
	if t.Null {
		return []byte("null"), nil
	}
	data := t.Doc.Data
	r := newRewriter(data)
	ctx := &renderCtx{present: t.Lookup, written: map[string]bool{}, objects: true}
	add := func(off int, i int32) {
		r.at(off).write = func(b *bytes.Buffer, s, e int) error {
			return wb.expand(b, i, data[s:e], ctx)
		}
	}
	if t == wb.in {
		for _, dr := range wb.d.Dangling {
			if wb.destroyed[dr.Doomed] {
				add(dr.Offset, dr.Doomed)
			}
		}
	} else {
		t.StringsOfLength(wb.snap.MightBeID, func(sv snapshot.StringValue) bool {
			if i, ok := wb.snap.Lookup(sv.Value); ok && wb.isDestroyed(i) {
				add(sv.Offset, i)
			}
			return true
		})
	}
	if len(r.edits) == 0 {
		return data[t.Start:t.End], nil
	}
	var b bytes.Buffer
	b.Grow(t.End - t.Start + 4096)
	if err := r.value(&b, t.Start, t.End); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// patchAndDrop applies the patches to the incoming model and removes the
// dropped objects. It returns the incoming tree itself when there is
// nothing to do, else the tree of the new bytes.
func (wb *writeBack) patchAndDrop(patches map[string][]json.RawMessage) (*snapshot.Tree, error) {
	in := wb.in
	data := in.Doc.Data
	r := newRewriter(data)
	dropped := map[int32]bool{}
	for _, i := range wb.d.Dropped {
		dropped[i] = true
	}
	subs := map[int32][]json.RawMessage{}
	for _, id := range sortedKeys(patches) {
		j, ok := in.Lookup(id)
		if !ok {
			if _, ok := wb.snap.Lookup(id); ok {
				continue // a doomed subscriber leaves the model
			}
			return nil, fmt.Errorf("write-back: patch for subscriber %s: no such object in either model", id)
		}
		subs[j] = patches[id]
	}
	for c := range in.Objects {
		o := &in.Objects[c]
		switch {
		case dropped[o.First]:
			r.at(o.Start).remove = true
		case subs[o.First] != nil:
			list, id, path, depth := subs[o.First], o.ID, in.ObjectPath(int32(c)), in.Depth(int32(c))
			r.at(o.Start).write = func(b *bytes.Buffer, s, e int) error {
				var cur bytes.Buffer
				if err := r.inner(&cur, s, e); err != nil {
					return err
				}
				obj := cur.Bytes()
				for _, patch := range list {
					var err error
					if obj, err = CheckPatch(obj, patch, depth); err != nil {
						return fmt.Errorf("write-back: patch for subscriber %s at %s: %w", id, path, err)
					}
				}
				b.Write(obj)
				return nil
			}
		}
	}
	if len(r.edits) == 0 {
		return in, nil
	}
	var b bytes.Buffer
	b.Grow(in.End - in.Start + 4096)
	b.WriteString(`{"Objects":`)
	if e := r.edits[in.Start]; e != nil && e.remove {
		b.WriteString("null") // the root itself is dropped
	} else if err := r.value(&b, in.Start, in.End); err != nil {
		return nil, err
	}
	b.WriteString("}")
	return reload(b.Bytes())
}

// reload indexes an Objects value wrapped as {"Objects": value}.
func reload(wrapped []byte) (*snapshot.Tree, error) {
	_, t, err := snapshot.LoadModel(snapshot.NewDocument("write-back", wrapped))
	if err != nil {
		return nil, fmt.Errorf("write-back: internal error: the model written back does not load: %w", err)
	}
	return t, nil
}

// renderCtx is the state of one output value being written: which ids
// are already there as full copies.
type renderCtx struct {
	present func(id string) (int32, bool) // ids of the model being written into
	written map[string]bool               // destroyed objects written in full so far
	objects bool                          // writing Objects (else ObjectsCopy)
}

func (c *renderCtx) has(id string) bool {
	if c.written[id] {
		return true
	}
	_, ok := c.present(id)
	return ok
}

// expand writes a reference to the destroyed snapshot object i: in full
// the first time, else as the bare reference raw.
func (wb *writeBack) expand(b *bytes.Buffer, i int32, raw []byte, ctx *renderCtx) error {
	id := wb.snap.Objects[i].ID
	if ctx.has(id) {
		b.Write(raw)
		return nil
	}
	ctx.written[id] = true
	return wb.render(b, i, ctx)
}

// render writes snapshot copy i in full. Copies inside it of objects
// destroyed in this run get "destroyed": true; copies of objects present
// in the output elsewhere become bare references; in Objects, doomed
// objects that still exist are left out (ObjectsCopy puts them back);
// references to destroyed objects not yet written are written in full.
func (wb *writeBack) render(b *bytes.Buffer, i int32, ctx *renderCtx) error {
	snap := wb.snap
	objs := snap.Objects
	data := snap.Doc.Data
	o := &objs[i]
	r := newRewriter(data)
	flag := func(b *bytes.Buffer, s, e int) error {
		return flagHeader(b, data, s)
	}
	if wb.isDestroyed(o.First) {
		r.at(o.HeaderStart).write = flag
	}
	bare := func(id string) func(b *bytes.Buffer, s, e int) error {
		return func(b *bytes.Buffer, s, e int) error {
			return writeString(b, id)
		}
	}
	lo := sort.Search(len(objs), func(k int) bool { return objs[k].End > o.Start })
	for c := int32(lo); c < i; c++ { // closing order: the copies inside i
		oc := &objs[c]
		if !oc.HasID {
			continue
		}
		id := oc.ID
		switch {
		case wb.isDestroyed(oc.First):
			r.at(oc.HeaderStart).write = flag
			r.at(oc.Start).write = func(b *bytes.Buffer, s, e int) error {
				// ObjectsCopy always keeps the whole copy: a doomed object
				// that still exists may sit inside it.
				if ctx.objects && ctx.has(id) {
					return writeString(b, id)
				}
				ctx.written[id] = true
				return r.inner(b, s, e)
			}
		case wb.d.IsDoomed(oc.First):
			if ctx.objects {
				r.at(oc.Start).remove = true
			}
		default:
			if _, ok := ctx.present(id); ok {
				r.at(oc.Start).write = bare(id)
			}
		}
	}
	for _, ref := range wb.snapRefs(o.Start, o.End) {
		obj := ref.object
		r.at(ref.off).write = func(b *bytes.Buffer, s, e int) error {
			return wb.expand(b, obj, data[s:e], ctx)
		}
	}
	return r.value(b, o.Start, o.End)
}

// snapRefs returns the references to destroyed objects in the snapshot
// bytes [start, end).
func (wb *writeBack) snapRefs(start, end int) []snapRef {
	if !wb.refsDone {
		wb.refsDone = true
		wb.snap.StringsOfLength(wb.snap.MightBeID, func(sv snapshot.StringValue) bool {
			if i, ok := wb.snap.Lookup(sv.Value); ok && wb.isDestroyed(i) {
				wb.refs = append(wb.refs, snapRef{off: sv.Offset, object: i})
			}
			return true
		})
	}
	lo := sort.Search(len(wb.refs), func(k int) bool { return wb.refs[k].off >= start })
	hi := sort.Search(len(wb.refs), func(k int) bool { return wb.refs[k].off >= end })
	return wb.refs[lo:hi]
}

// objectsCopy builds the ObjectsCopy value from the Objects value.
func (wb *writeBack) objectsCopy(objects []byte) ([]byte, error) {
	some := false
	for _, pl := range wb.p.Objects {
		some = some || wb.retained[pl.Snapshot]
	}
	if !some {
		return objects, nil
	}
	wrapped := make([]byte, 0, len(objects)+13)
	wrapped = append(wrapped, `{"Objects":`...)
	wrapped = append(wrapped, objects...)
	wrapped = append(wrapped, '}')
	t, err := reload(wrapped)
	if err != nil {
		return nil, err
	}
	var top []int32
	for _, pl := range wb.p.Objects {
		if i := pl.Snapshot; wb.retained[i] && !wb.covered(i, t) {
			top = append(top, i)
		}
	}
	pl := &placer{wb: wb, t: t, data: t.Doc.Data, r: newRewriter(t.Doc.Data), root: -1,
		ctx: &renderCtx{present: t.Lookup, written: map[string]bool{}}, retainedAt: map[int]*[]int32{}, keys: map[string]bool{}, ms: map[int][]member{}, snapMs: map[int][]member{}}
	for _, i := range top {
		if err := pl.place(i); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	b.Grow(len(objects) + len(wb.snap.Doc.Data)/4)
	switch {
	case pl.root >= 0:
		err = wb.render(&b, pl.root, pl.ctx)
	case t.Null:
		b.WriteString(`{"` + RetainedKey + `": `)
		err = pl.writeList(&b, pl.nullRoot)
		b.WriteString("}")
	default:
		err = pl.r.value(&b, t.Start, t.End)
	}
	if err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// covered reports whether the retained snapshot object i is written inside
// the copy of a retained object enclosing it, so that it needs no place of
// its own: no copy between them is replaced by a bare reference, as render
// does for the objects of out, the Objects value.
func (wb *writeBack) covered(i int32, out *snapshot.Tree) bool {
	snap := wb.snap
	for c := snap.Enclosing(i); c >= 0; c = snap.Enclosing(c) {
		oc := &snap.Objects[c]
		f := oc.First
		switch {
		case wb.d.IsDoomed(f):
			if wb.retained[f] && f == c {
				return true
			}
		case oc.HasID:
			if _, ok := out.Lookup(oc.ID); ok {
				return false // written as a bare reference
			}
		}
	}
	return false
}

// placer puts the retained objects into ObjectsCopy.
type placer struct {
	wb   *writeBack
	t    *snapshot.Tree // the Objects value
	data []byte
	r    *rewriter
	ctx  *renderCtx

	root       int32            // retained object that becomes the whole value, or -1
	nullRoot   []int32          // retained objects when Objects is null
	retainedAt map[int]*[]int32 // new RetainedKey arrays, by the object's offset
	keys       map[string]bool  // properties added, by container offset and key
	ms         map[int][]member // members of the containers looked at, by offset
	snapMs     map[int][]member // the same in the snapshot
}

func (pl *placer) snapMembers(off int) []member {
	ms, ok := pl.snapMs[off]
	if !ok {
		ms, _ = members(pl.wb.snap.Doc.Data, off)
		pl.snapMs[off] = ms
	}
	return ms
}

// members lists the members of the container at off once: placing many
// objects in one large container (the root) stays linear.
func (pl *placer) members(off int) []member {
	ms, ok := pl.ms[off]
	if !ok {
		ms, _ = members(pl.data, off)
		pl.ms[off] = ms
	}
	return ms
}

// findKey returns the member with key of the object at off.
func (pl *placer) findKey(off int, key string) (member, bool) {
	if pl.data[off] != '{' {
		return member{}, false
	}
	return keyIn(pl.data, pl.members(off), key)
}

func (pl *placer) hasHeader(off int) bool {
	_, ok := pl.findKey(off, "?")
	return ok
}

// seg is one step of a JSON path: a key (raw JSON string) or an index.
type seg struct {
	raw   []byte // nil for an array index
	key   string
	index int
}

func (pl *placer) place(i int32) error {
	wb := pl.wb
	snap := wb.snap
	o := &snap.Objects[i]
	encl := snap.Enclosing(i)
	from := snap.Start
	if encl >= 0 {
		from = snap.Objects[encl].Start
	}
	segs := pathTo(snap.Doc.Data, from, o.Start, pl.snapMembers)
	anchor := -1
	switch {
	case encl >= 0:
		owner := &snap.Objects[snap.Objects[encl].First]
		if owner.HasID {
			if j, ok := pl.t.Lookup(owner.ID); ok {
				anchor = pl.t.Objects[j].Start
			}
		}
	case pl.t.Null:
		if len(segs) == 0 && pl.root < 0 {
			pl.root = i
			return nil
		}
	default:
		anchor = pl.t.Start
	}
	if anchor >= 0 && len(segs) > 0 && pl.atPlace(i, anchor, segs) {
		return nil
	}
	return pl.fallback(i)
}

// atPlace puts i at the path segs below the object (or root) at anchor,
// and reports whether that place exists.
func (pl *placer) atPlace(i int32, anchor int, segs []seg) bool {
	data := pl.data
	pos := anchor
	for k, sg := range segs {
		if k > 0 && data[pos] == '{' && pl.hasHeader(pos) {
			return false // an object in between: not the same owner
		}
		last := k == len(segs)-1
		if sg.raw == nil {
			if data[pos] != '[' {
				return false
			}
			if last {
				pl.r.at(pos).adds = append(pl.r.at(pos).adds, addition{value: pl.writer(i)})
				return true
			}
			ms := pl.members(pos)
			if sg.index >= len(ms) {
				return false
			}
			pos = ms[sg.index].vs
			continue
		}
		if data[pos] != '{' {
			return false
		}
		m, ok := pl.findKey(pos, sg.key)
		if last {
			id := pl.wb.snap.Objects[i].ID
			switch {
			case !ok:
				k := fmt.Sprint(pos, "\x00", sg.key)
				if pl.keys[k] {
					return false
				}
				pl.keys[k] = true
				pl.r.at(pos).adds = append(pl.r.at(pos).adds, addition{key: sg.raw, value: pl.writer(i)})
				return true
			case pl.r.edits[m.vs] == nil && (bytes.Equal(data[m.vs:m.ve], []byte("null")) || isString(data, m.vs, m.ve, id)):
				w := pl.writer(i)
				pl.r.at(m.vs).write = func(b *bytes.Buffer, s, e int) error { return w(b) }
				return true
			}
			return false
		}
		if !ok {
			return false
		}
		pos = m.vs
	}
	return false
}

func (pl *placer) writer(i int32) func(b *bytes.Buffer) error {
	return func(b *bytes.Buffer) error { return pl.wb.render(b, i, pl.ctx) }
}

func (pl *placer) writeList(b *bytes.Buffer, list []int32) error {
	b.WriteByte('[')
	for k, i := range list {
		if k > 0 {
			b.WriteString(", ")
		}
		if err := pl.wb.render(b, i, pl.ctx); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

// fallback puts i in the RetainedKey array of its nearest owner present in
// Objects, else of the root.
func (pl *placer) fallback(i int32) error {
	snap := pl.wb.snap
	for a := snap.Objects[i].Owner; a >= 0; a = snap.Objects[a].Owner {
		oa := &snap.Objects[a]
		if !oa.HasID {
			continue
		}
		if j, ok := pl.t.Lookup(oa.ID); ok && pl.retainIn(pl.t.Objects[j].Start, i) {
			return nil
		}
	}
	switch {
	case pl.t.Null:
		pl.nullRoot = append(pl.nullRoot, i)
		return nil
	case pl.data[pl.t.Start] == '[':
		pl.r.at(pl.t.Start).adds = append(pl.r.at(pl.t.Start).adds, addition{value: pl.writer(i)})
		return nil
	case pl.retainIn(pl.t.Start, i):
		return nil
	}
	return fmt.Errorf("write-back: no place for %s (%s) in ObjectsCopy: the root's %q is not an array",
		snap.Objects[i].ID, snap.ObjectPath(i), RetainedKey)
}

// retainIn appends i to the RetainedKey array of the object at off,
// adding the property when it is missing; false when the property is
// there but not an array.
func (pl *placer) retainIn(off int, i int32) bool {
	if list := pl.retainedAt[off]; list != nil {
		*list = append(*list, i)
		return true
	}
	m, ok := pl.findKey(off, RetainedKey)
	if ok {
		if pl.data[m.vs] != '[' {
			return false
		}
		pl.r.at(m.vs).adds = append(pl.r.at(m.vs).adds, addition{value: pl.writer(i)})
		return true
	}
	list := &[]int32{i}
	pl.retainedAt[off] = list
	pl.r.at(off).adds = append(pl.r.at(off).adds, addition{key: []byte(`"` + RetainedKey + `"`),
		value: func(b *bytes.Buffer) error { return pl.writeList(b, *list) }})
	return true
}

// attributes drops the rows [objectId, key, value] of destroyed objects.
func (wb *writeBack) attributes(raw json.RawMessage, destroyedFlags []bool) ([]byte, error) {
	data := bytes.TrimSpace(raw)
	if len(data) == 0 || string(data) == "null" {
		return []byte("[]"), nil
	}
	if !json.Valid(data) {
		return nil, errors.New("write-back: Attributes is not valid JSON")
	}
	if data[0] != '[' {
		return nil, errors.New("write-back: Attributes: expected an array of [objectId, key, value] rows")
	}
	gone := map[string]bool{}
	for k, pl := range wb.p.Objects {
		if destroyedFlags[k] {
			gone[pl.ID] = true
		}
	}
	for _, i := range wb.d.Dropped {
		gone[wb.in.Objects[i].ID] = true
	}
	r := newRewriter(data)
	rows, _ := members(data, 0)
	for _, row := range rows {
		if data[row.vs] != '[' {
			continue
		}
		cells, _ := members(data, row.vs)
		if len(cells) == 0 || data[cells[0].vs] != '"' {
			continue
		}
		if id, err := decodeString(data[cells[0].vs:cells[0].ve]); err == nil && gone[id] {
			r.at(row.vs).remove = true
		}
	}
	if len(r.edits) == 0 {
		return data, nil
	}
	var b bytes.Buffer
	err := r.value(&b, 0, len(data))
	return b.Bytes(), err
}

// rewriter writes a JSON value with edits at the offsets where values
// start; bytes outside the edits are copied unchanged.
type rewriter struct {
	data   []byte
	edits  map[int]*edit
	offs   []int // sorted keys of edits
	sorted bool
}

// edit is what happens to the value starting at an offset.
type edit struct {
	remove bool                                  // leave the member out of its container
	write  func(b *bytes.Buffer, s, e int) error // write in place of data[s:e]
	adds   []addition                            // appended to the container starting here
}

// addition is a member appended to an object (key set) or an array.
type addition struct {
	key   []byte // raw JSON string
	value func(b *bytes.Buffer) error
}

func newRewriter(data []byte) *rewriter {
	return &rewriter{data: data, edits: map[int]*edit{}}
}

func (r *rewriter) at(off int) *edit {
	e := r.edits[off]
	if e == nil {
		e = &edit{}
		r.edits[off] = e
		r.offs = append(r.offs, off)
		r.sorted = false
	}
	return e
}

// within reports whether an edit starts in [s, e).
func (r *rewriter) within(s, e int) bool {
	if !r.sorted {
		sort.Ints(r.offs)
		r.sorted = true
	}
	k := sort.SearchInts(r.offs, s)
	return k < len(r.offs) && r.offs[k] < e
}

// value writes the value data[s:e].
func (r *rewriter) value(b *bytes.Buffer, s, e int) error {
	if ed := r.edits[s]; ed != nil && ed.write != nil {
		return ed.write(b, s, e)
	}
	return r.inner(b, s, e)
}

// inner writes the value data[s:e] with the edits inside it, ignoring a
// write edit at s itself.
func (r *rewriter) inner(b *bytes.Buffer, s, e int) error {
	data := r.data
	ed := r.edits[s]
	if (ed == nil || len(ed.adds) == 0) && !r.within(s+1, e) {
		b.Write(data[s:e])
		return nil
	}
	if c := data[s]; c != '{' && c != '[' {
		b.Write(data[s:e])
		return nil
	}
	var adds []addition
	if ed != nil {
		adds = ed.adds
	}
	ms, end := members(data, s)
	b.WriteByte(data[s])
	kept := 0
	for k, m := range ms {
		if me := r.edits[m.vs]; me != nil && me.remove {
			continue
		}
		if kept == 0 {
			b.Write(data[ms[0].lead:ms[0].start])
		} else {
			b.Write(data[ms[k-1].ve:m.start])
		}
		b.Write(data[m.start:m.vs])
		if err := r.value(b, m.vs, m.ve); err != nil {
			return err
		}
		kept++
	}
	sep, lead := []byte(": "), []byte(" ")
	if len(ms) > 0 {
		if last := ms[len(ms)-1]; len(ms) > 1 || last.start > last.lead {
			lead = data[last.lead:last.start]
		}
		if data[s] == '{' {
			sep = data[ms[0].keyEnd:ms[0].vs]
		}
	}
	for _, a := range adds {
		switch {
		case kept > 0:
			b.WriteByte(',')
			b.Write(lead)
		case len(ms) > 0:
			b.Write(data[ms[0].lead:ms[0].start])
		}
		if a.key != nil {
			b.Write(a.key)
			b.Write(sep)
		}
		if err := a.value(b); err != nil {
			return err
		}
		kept++
	}
	switch {
	case len(ms) == 0 && kept == 0:
		b.Write(data[s+1 : end])
	case len(ms) > 0 && kept > 0:
		b.Write(data[ms[len(ms)-1].ve:end])
	}
	b.WriteByte(data[end])
	return nil
}

// member is a member of a JSON object or an element of an array.
type member struct {
	lead   int // start of its leading white space (after the comma or bracket)
	start  int // the key (object) or the value (array)
	keyEnd int // just past the key's closing quote
	vs, ve int // the value
}

// members lists the members of the (valid) object or array at open and
// returns the offset of its closing bracket.
func members(data []byte, open int) ([]member, int) {
	var ms []member
	closing := byte(']')
	if data[open] == '{' {
		closing = '}'
	}
	lead := open + 1
	pos := jsonskip.WS(data, lead)
	if data[pos] == closing {
		return nil, pos
	}
	for {
		m := member{lead: lead, start: pos, vs: pos}
		if closing == '}' {
			m.keyEnd = jsonskip.String(data, pos)
			m.vs = jsonskip.WS(data, jsonskip.WS(data, m.keyEnd)+1)
		}
		m.ve = jsonskip.Value(data, m.vs)
		ms = append(ms, m)
		pos = jsonskip.WS(data, m.ve)
		if pos >= len(data) || data[pos] != ',' {
			return ms, pos
		}
		lead = pos + 1
		pos = jsonskip.WS(data, lead)
	}
}

// keyIn returns the first of the members ms of an object with key.
func keyIn(data []byte, ms []member, key string) (member, bool) {
	for _, m := range ms {
		if k, err := decodeString(data[m.start:m.keyEnd]); err == nil && k == key {
			return m, true
		}
	}
	return member{}, false
}

// isString reports whether data[s:e] is the JSON string s.
func isString(data []byte, s, e int, want string) bool {
	if data[s] != '"' {
		return false
	}
	v, err := decodeString(data[s:e])
	return err == nil && v == want
}

func decodeString(raw []byte) (string, error) {
	if bytes.IndexByte(raw, '\\') < 0 && len(raw) >= 2 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

func writeString(b *bytes.Buffer, s string) error {
	q, err := json.Marshal(s)
	if err != nil {
		return err
	}
	b.Write(q)
	return nil
}

// pathTo returns the path from the container value at from down to the
// value starting at off; list gives the members of a container.
func pathTo(data []byte, from, off int, list func(open int) []member) []seg {
	var segs []seg
	pos := from
	for pos != off {
		if c := data[pos]; c != '{' && c != '[' {
			return segs
		}
		ms := list(pos)
		k := sort.Search(len(ms), func(k int) bool { return ms[k].ve > off })
		if k == len(ms) || off < ms[k].vs {
			return segs
		}
		m := ms[k]
		sg := seg{index: k}
		if data[pos] == '{' {
			sg.raw = data[m.start:m.keyEnd]
			sg.key, _ = decodeString(sg.raw)
		}
		segs = append(segs, sg)
		pos = m.vs
	}
	return segs
}

// flagHeader writes the header at hs with "destroyed": true: an existing
// "destroyed" value is replaced, else the key is added first.
func flagHeader(b *bytes.Buffer, data []byte, hs int) error {
	ms, end := members(data, hs)
	cur := hs
	found := false
	for _, m := range ms {
		if k, err := decodeString(data[m.start:m.keyEnd]); err != nil || k != "destroyed" {
			continue
		}
		found = true
		if string(data[m.vs:m.ve]) != "true" {
			b.Write(data[cur:m.vs])
			b.WriteString("true")
			cur = m.ve
		}
	}
	if found {
		b.Write(data[cur : end+1])
		return nil
	}
	if len(ms) == 0 {
		b.WriteString(`{"destroyed": true}`)
		return nil
	}
	lead, sep := data[ms[0].lead:ms[0].start], data[ms[0].keyEnd:ms[0].vs]
	b.WriteByte('{')
	b.Write(lead)
	b.WriteString(`"destroyed"`)
	b.Write(sep)
	b.WriteString("true,")
	if len(lead) == 0 && bytes.HasSuffix(sep, []byte(" ")) {
		b.WriteByte(' ') // {"id": "x"} becomes {"destroyed": true, "id": "x"}
	}
	b.Write(data[hs+1 : end+1])
	return nil
}

// applyPatch applies the RFC 7386 merge patch to the object obj (valid
// JSON), changing only the bytes of the members the patch sets or
// removes. New values are written in the style of their neighbours.
func applyPatch(obj, patch []byte) ([]byte, error) {
	patch = bytes.TrimSpace(patch)
	if !json.Valid(patch) {
		return nil, errors.New("the patch is not valid JSON")
	}
	if patch[0] != '{' {
		return nil, errors.New("the patch is not a JSON object: it would replace the whole object and its header")
	}
	return mergeObject(obj, patch, "$")
}

// mergeObject merges the patch object into the object target, refusing
// what a patch may not do (see CheckPatch): set a "?" key, remove or
// replace a value holding an object. path is target's JSON path for the
// errors.
func mergeObject(target, patch []byte, path string) ([]byte, error) {
	type pv struct {
		raw, val []byte
	}
	var order []string
	byKey := map[string]pv{}
	pms, _ := members(patch, 0)
	for _, m := range pms {
		k, err := decodeString(patch[m.start:m.keyEnd])
		if err != nil {
			return nil, err
		}
		if k == "?" {
			return nil, fmt.Errorf(`it sets the header "?" at %s; a patch may change properties only`, path)
		}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = pv{raw: patch[m.start:m.keyEnd], val: patch[m.vs:m.ve]}
	}
	tms, end := members(target, 0)
	prefix, unit := indentation(target, tms, end)
	r := newRewriter(target)
	seen := map[string]bool{}
	for _, m := range tms {
		k, err := decodeString(target[m.start:m.keyEnd])
		if err != nil {
			return nil, err
		}
		p, ok := byKey[k]
		if !ok {
			continue
		}
		seen[k] = true
		at := childPath(path, k)
		switch {
		case string(p.val) == "null":
			if id, where, ok := objectIn(target, m.vs, at); ok {
				return nil, fmt.Errorf("it removes object %s at %s; a patch may change properties only", id, where)
			}
			r.at(m.vs).remove = true
		case p.val[0] == '{' && target[m.vs] == '{':
			merged, err := mergeObject(target[m.vs:m.ve], p.val, at)
			if err != nil {
				return nil, err
			}
			r.at(m.vs).write = func(b *bytes.Buffer, s, e int) error { b.Write(merged); return nil }
		default:
			if id, where, ok := objectIn(target, m.vs, at); ok {
				return nil, fmt.Errorf("it replaces object %s at %s; a patch may change properties only", id, where)
			}
			if err := headerFree(p.val, 0, at); err != nil {
				return nil, err
			}
			v, err := newValue(p.val, prefix, unit)
			if err != nil {
				return nil, err
			}
			r.at(m.vs).write = func(b *bytes.Buffer, s, e int) error { b.Write(v); return nil }
		}
	}
	for _, k := range order {
		p := byKey[k]
		if seen[k] || string(p.val) == "null" {
			continue
		}
		if err := headerFree(p.val, 0, childPath(path, k)); err != nil {
			return nil, err
		}
		v, err := newValue(p.val, prefix, unit)
		if err != nil {
			return nil, err
		}
		r.at(0).adds = append(r.at(0).adds, addition{key: p.raw, value: func(b *bytes.Buffer) error { b.Write(v); return nil }})
	}
	if len(r.edits) == 0 {
		return target, nil
	}
	var b bytes.Buffer
	err := r.value(&b, 0, len(target))
	return b.Bytes(), err
}

func childPath(path, key string) string {
	var b strings.Builder
	b.WriteString(path)
	ident := key != ""
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			ident = false
		}
	}
	if ident {
		b.WriteString("." + key)
	} else {
		q, _ := json.Marshal(key)
		b.WriteString("[" + string(q) + "]")
	}
	return b.String()
}

// indentation returns the line prefix of the members of the object and
// the unit of one more level, or "" and "" for an object on one line.
func indentation(data []byte, ms []member, end int) (prefix, unit string) {
	if len(ms) == 0 {
		return "", ""
	}
	lead := data[ms[len(ms)-1].lead:ms[len(ms)-1].start]
	nl := bytes.LastIndexByte(lead, '\n')
	if nl < 0 {
		return "", ""
	}
	prefix = string(lead[nl+1:])
	closing := data[ms[len(ms)-1].ve:end]
	outer := ""
	if c := bytes.LastIndexByte(closing, '\n'); c >= 0 {
		outer = string(closing[c+1:])
	}
	unit = strings.TrimPrefix(prefix, outer)
	if unit == prefix || unit == "" {
		unit = "  "
	}
	return prefix, unit
}

// newValue returns the value a merge patch value v sets where the target
// has no object to merge into: v with null members of objects removed
// (RFC 7386), indented with prefix and unit, or compact when unit is "".
func newValue(v []byte, prefix, unit string) ([]byte, error) {
	var c bytes.Buffer
	if err := json.Compact(&c, v); err != nil {
		return nil, err
	}
	stripped := stripNulls(c.Bytes())
	if unit == "" {
		return stripped, nil
	}
	var b bytes.Buffer
	if err := json.Indent(&b, stripped, prefix, unit); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// stripNulls removes the null members of the compact JSON object v, at
// every level reached through objects.
func stripNulls(v []byte) []byte {
	if v[0] != '{' {
		return v
	}
	ms, _ := members(v, 0)
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for _, m := range ms {
		val := v[m.vs:m.ve]
		if string(val) == "null" {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(v[m.start:m.keyEnd])
		b.WriteByte(':')
		b.Write(stripNulls(val))
		n++
	}
	b.WriteByte('}')
	return b.Bytes()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
