package destroy

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/objgc/objgc/destroy/order"
	"io"
	"sort"

	"github.com/objgc/objgc/diff"
	"github.com/objgc/objgc/internal/jsonedit"
	"github.com/objgc/objgc/snapshot"
)

// Effects says what an apply run did to the doomed objects of a plan:
// the input of BuildWriteBack.
type Effects struct {
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

// WrittenModel is the model BuildWriteBack decided on, written by WriteTo
// and WriteNested. Its three values are not held in memory: they are
// written piece by piece from the input's bytes and the edits, unchanged
// regions copied in document order (see BuildWriteBack for what is held).
type WrittenModel struct {
	objects, objectsCopy, attributes func(w jsonedit.Writer) error
	// docs are the documents the values are copied from: a mapped one's
	// pages are released as the copy goes (snapshot.Document.Release).
	docs []*snapshot.Document
}

// WriteTo writes the envelope to w, then a newline.
func (m *WrittenModel) WriteTo(w io.Writer) (int64, error) {
	cw := newCountWriter(w)
	cw.docs = m.docs
	m.writeNested(cw, "")
	cw.WriteByte('\n')
	return cw.finish()
}

// WriteNested writes the envelope as the value of a member whose line is
// indented by indent (an engine task's "model"): the layout of WriteTo
// with indent before each key and the closing brace, and no final
// newline.
func (m *WrittenModel) WriteNested(w io.Writer, indent string) (int64, error) {
	cw := newCountWriter(w)
	cw.docs = m.docs
	m.writeNested(cw, indent)
	return cw.finish()
}

func (m *WrittenModel) writeNested(w *countWriter, indent string) {
	key := func(name string) { w.WriteString("\n" + indent + "  \"" + name + "\": ") }
	w.WriteByte('{')
	// Each value is checked on a goroutine of its own, and the verdicts
	// are taken once all are written: the check of one value goes on
	// while the next is written (the checks are the slower half of the
	// writing). A value found broken still fails the write
	// before anything is committed.
	type checked struct {
		name  string
		valid *asyncValidator
	}
	var checks []checked
	for k, part := range []struct {
		name  string
		write func(jsonedit.Writer) error
	}{{"Objects", m.objects}, {"ObjectsCopy", m.objectsCopy}, {"Attributes", m.attributes}} {
		if k > 0 {
			w.WriteByte(',')
		}
		key(part.name)
		if w.err == nil {
			w.valid = newAsyncValidator()
			checks = append(checks, checked{part.name, w.valid})
			if err := part.write(w); err != nil && w.err == nil {
				w.err = err
			}
			w.valid.CloseWrite()
			w.valid = nil
		}
	}
	for _, c := range checks {
		if err := c.valid.Err(); err != nil && w.err == nil {
			w.err = fmt.Errorf("write-back: internal error: the %s value written is %w", c.name, err)
		}
	}
	w.WriteString("\n" + indent + "}")
}

// countWriter is the jsonedit.Writer the values are written to: w itself
// when it is one (the *bufio.Writer of an atomic write), else w behind a
// buffer; it counts the bytes and keeps the first error, after which it
// writes nothing more.
type countWriter struct {
	w     jsonedit.Writer
	buf   *bufio.Writer // nil when w is the caller's own
	n     int64
	err   error
	valid *asyncValidator // when not nil, checks what is written
	// docs are released every releaseBytes written: the bytes copied
	// from a mapped model leave the resident set behind the copy.
	docs []*snapshot.Document
	next int64
}

// releaseBytes is how many bytes a countWriter writes between two releases
// of its model's pages.
const releaseBytes = 4 << 20

func newCountWriter(w io.Writer) *countWriter {
	if jw, ok := w.(jsonedit.Writer); ok {
		return &countWriter{w: jw}
	}
	buf := bufio.NewWriterSize(w, 64<<10)
	return &countWriter{w: buf, buf: buf}
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.valid != nil {
		c.valid.Write(p)
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	if c.n >= c.next {
		for _, d := range c.docs {
			d.Release()
		}
		c.next = c.n + releaseBytes
	}
	return n, err
}

func (c *countWriter) WriteString(s string) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.valid != nil {
		c.valid.WriteString(s)
	}
	n, err := c.w.WriteString(s)
	c.n += int64(n)
	c.err = err
	return n, err
}

func (c *countWriter) WriteByte(b byte) error {
	if c.err != nil {
		return c.err
	}
	if c.valid != nil {
		c.valid.WriteByte(b)
	}
	c.err = c.w.WriteByte(b)
	if c.err == nil {
		c.n++
	}
	return c.err
}

func (c *countWriter) finish() (int64, error) {
	if c.err == nil && c.buf != nil {
		c.err = c.buf.Flush()
	}
	return c.n, c.err
}

// BuildWriteBack decides the model `objgc apply` writes back
// (docs/design.md, "Write-back"; docs/writeback.md); WrittenModel.WriteTo
// writes it as the envelope
//
//	{
//	  "Objects": <objects>,
//	  "ObjectsCopy": <objects copy>,
//	  "Attributes": <attributes>
//	}
//
// followed by a newline: two spaces before each key, the values' bytes as
// described below, unindented.
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
// error, since apply refuses to run on such a model. Every error is
// returned here, before anything is written; WriteTo returns only the
// writer's.
//
// Memory: the values are written from the model's bytes as WriteTo goes,
// the incoming model read from start to end for each of Objects and
// ObjectsCopy, never copied whole. What BuildWriteBack holds until then is
// small: the edits (offsets), the patched bytes of each patched
// subscriber under proxyMin (a larger one only the members its patches
// name, see proxySub), and, when a doomed object is not destroyed
// (failed, blocked, not reached), the places ObjectsCopy puts it back,
// found in the model's bytes after a pass over Objects that writes
// nothing. Where those places are not in bytes copied from the model
// (errNotStreamed), Objects is built in memory and indexed once more, as
// before (docs/writeback.md, "Memory").
func BuildWriteBack(p *order.Plan, out Effects, attributes json.RawMessage, onDanglingKeep bool) (*WrittenModel, error) {
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
	wb := newWriteBack(p, out.Destroyed)
	objects, err := wb.objects(out.Patches)
	if err != nil {
		return nil, err
	}
	attrs, err := wb.attributes(attributes, out.Destroyed)
	if err != nil {
		return nil, err
	}
	m := &WrittenModel{objects: objects, objectsCopy: objects, attributes: attrs,
		docs: []*snapshot.Document{d.Snapshot.Doc, d.Incoming.Doc}}
	some := false
	for _, pl := range p.Objects {
		some = some || wb.retained[pl.Snapshot]
	}
	if some {
		m.objectsCopy, err = wb.objectsCopyStreamed()
		if errors.Is(err, errNotStreamed) {
			var b bytes.Buffer
			if err := objects(&b); err != nil {
				return nil, err
			}
			built := b.Bytes()
			m.objects = func(w jsonedit.Writer) error { _, err := w.Write(built); return err }
			m.objectsCopy, err = wb.objectsCopy(built)
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

func newWriteBack(p *order.Plan, destroyed []bool) *writeBack {
	d := p.Diff
	wb := &writeBack{p: p, d: d, snap: d.Snapshot, in: d.Incoming,
		destroyed: make([]bool, len(d.Snapshot.Objects)), retained: make([]bool, len(d.Snapshot.Objects))}
	for k, pl := range p.Objects {
		if destroyed[k] {
			wb.destroyed[pl.Snapshot] = true
		} else {
			wb.retained[pl.Snapshot] = true
		}
	}
	return wb
}

type writeBack struct {
	p        *order.Plan
	d        *diff.Result
	snap, in *snapshot.Tree
	// destroyed and retained are by snapshot object index (first copies
	// of doomed objects): destroyed in this run, or still in the world.
	destroyed, retained []bool

	refs     []snapRef // references in the snapshot to destroyed objects
	refsDone bool

	gen *objectsGen // nil when Objects is null
}

// snapRef is a reference in the snapshot (or in a patched copy) to an
// object destroyed in this run.
type snapRef struct {
	off    int
	object int32
}

func (wb *writeBack) isDestroyed(i int32) bool { return wb.d.IsDoomed(i) && wb.destroyed[i] }

// patchedSub is a copy of a subscriber with its patches applied (and the
// objects of Dropped inside it removed), and, when Objects' writer writes
// it from these bytes, the references in it to objects destroyed in this
// run, by offset in data.
type patchedSub struct {
	data []byte
	refs []snapRef
	// base is where data stands in the offsets of streamView: after the
	// incoming document and the patched copies before it.
	base int
}

// objects returns the writer of the Objects value: the incoming model
// with the copies of dropped objects removed, patched subscribers written
// from their patched bytes, and references to destroyed objects expanded.
// The patches are applied here, so that their errors come before any
// writing.
func (wb *writeBack) objects(patches map[string][]json.RawMessage) (func(jsonedit.Writer) error, error) {
	null := func(w jsonedit.Writer) error { _, err := w.WriteString("null"); return err }
	in := wb.in
	if in.Null {
		// The environment is deleted: no subscriber is left to patch.
		for _, id := range sortedKeys(patches) {
			if _, ok := wb.snap.Lookup(id); !ok {
				return nil, fmt.Errorf("write-back: patch for subscriber %s: no such object in either model", id)
			}
		}
		return null, nil
	}
	objs := in.Objects
	data := in.Doc.Data
	dropped := make([]bool, len(objs)) // by first copy
	for _, i := range wb.d.Dropped {
		dropped[i] = true
	}
	// removed: the copy is gone with a dropped object, itself or one
	// enclosing it. Copies are in closing order: enclosing ones come later.
	removed := make([]bool, len(objs))
	present := make([]bool, len(objs)) // by first copy: a copy is left
	root := int32(-1)
	for c := len(objs) - 1; c >= 0; c-- {
		o := &objs[c]
		e := in.Enclosing(int32(c))
		f := in.First(int32(c))
		removed[c] = dropped[f] || e >= 0 && removed[e]
		if !removed[c] {
			present[f] = true
		}
		if int(o.Start) == in.Start {
			root = int32(c)
		}
	}
	if root >= 0 && dropped[in.First(root)] {
		return null, nil // the root itself is dropped
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
	// The patched bytes of each subscriber copy left, computed in
	// document order, a copy inside another first (the outer one's bytes
	// hold the inner one's patched).
	var order []int32
	for c := range objs {
		if !removed[c] && subs[in.First(int32(c))] != nil {
			order = append(order, int32(c))
		}
	}
	sort.Slice(order, func(a, b int) bool { return objs[order[a]].Start < objs[order[b]].Start })
	patched := map[int32]*patchedSub{}
	rp := jsonedit.NewRewriter(data) // dropped objects out, patches in
	for c := range objs {
		if dropped[in.First(int32(c))] {
			rp.At(int(objs[c].Start)).Remove = true
		}
	}
	patch := func(c int32) (*patchedSub, error) {
		if pc := patched[c]; pc != nil {
			return pc, nil
		}
		o := &objs[c]
		var cur bytes.Buffer
		if err := rp.Inner(&cur, int(o.Start), int(o.End)); err != nil {
			return nil, err
		}
		obj := cur.Bytes()
		for _, patch := range subs[in.First(c)] {
			var err error
			if obj, err = CheckPatch(obj, patch, in.Depth(c)); err != nil {
				return nil, fmt.Errorf("write-back: patch for subscriber %s at %s: %w", in.ID(c), in.ObjectPath(c), err)
			}
		}
		pc := &patchedSub{data: obj}
		patched[c] = pc
		return pc, nil
	}
	for _, c := range order {
		rp.At(int(objs[c].Start)).Write = func(w jsonedit.Writer, s, e int) error {
			pc, err := patch(c)
			if err != nil {
				return err
			}
			_, err = w.Write(pc.data)
			return err
		}
	}
	// Which patched copies Objects' writer meets itself (the others are
	// inside the patched bytes of one it meets), in document order: those
	// not inside another, and those in a member that a proxy copies from
	// the model. A large one it meets is a proxy (proxySub); the others'
	// patched bytes are held.
	var top []int32
	proxies := map[int32]*proxySub{}
	met := map[int32]bool{}
	for _, c := range order {
		e := in.Enclosing(c)
		for e >= 0 && (subs[in.First(e)] == nil || removed[e]) {
			e = in.Enclosing(e)
		}
		switch {
		case e < 0:
			met[c] = true
		case met[e] && proxies[e] != nil:
			met[c] = proxies[e].copies(int(objs[c].Start))
		}
		if !met[c] {
			continue
		}
		o := &objs[c]
		if int(o.End)-int(o.Start) >= proxyMin {
			px, err := wb.newProxy(c, subs[in.First(c)], rp, data)
			if err != nil {
				return nil, err
			}
			proxies[c] = px
			continue
		}
		if _, err := patch(c); err != nil {
			return nil, err
		}
		top = append(top, c)
	}
	// The references to destroyed objects in the patched bytes: a patch
	// may have written some.
	base := len(data)
	for _, c := range top {
		pc := patched[c]
		pc.base = base
		base += len(pc.data)
		refs, err := wb.destroyedRefs(pc.data)
		if err != nil {
			return nil, err
		}
		pc.refs = refs
	}
	g := &objectsGen{wb: wb, data: data, removed: removed, present: present, patched: patched, top: top, proxies: proxies}
	for _, dr := range wb.d.Dangling {
		if wb.destroyed[dr.Doomed] {
			g.expand = append(g.expand, snapRef{off: dr.Offset, object: dr.Doomed})
		}
	}
	for c := range objs {
		if dropped[in.First(int32(c))] {
			g.drops = append(g.drops, int(objs[c].Start))
		}
	}
	wb.gen = g
	if len(order) == 0 && len(g.expand) == 0 && len(g.drops) == 0 {
		return func(w jsonedit.Writer) error { _, err := w.Write(data[in.Start:in.End]); return err }, nil
	}
	return func(w jsonedit.Writer) error {
		return g.rewriter(g.newCtx(), nil).Value(w, in.Start, in.End)
	}, nil
}

// objectsGen writes the Objects value from the incoming model's bytes and
// the edits, as often as asked, the same bytes each time.
type objectsGen struct {
	wb      *writeBack
	data    []byte                // the incoming model's document
	removed []bool                // by incoming copy: gone with a dropped object
	present []bool                // by incoming first copy: a copy is left
	patched map[int32]*patchedSub // by incoming copy: subscribers patched
	top     []int32               // the patched copies written from patched (in the order of their base)
	proxies map[int32]*proxySub   // by incoming copy: the patched copies written as proxies
	expand  []snapRef             // references to destroyed objects, by incoming offset
	drops   []int                 // the starts of the copies of dropped objects
}

// segAt returns the top patched copy whose bytes hold offset off, in the
// offsets of streamView.
func (g *objectsGen) segAt(off int) *patchedSub {
	k := sort.Search(len(g.top), func(k int) bool {
		pc := g.patched[g.top[k]]
		return pc.base+len(pc.data) > off
	})
	return g.patched[g.top[k]]
}

// has reports whether an object with id is in Objects outside the
// destroyed objects written in full.
func (g *objectsGen) has(id string) bool {
	j, ok := g.wb.in.Lookup(id)
	return ok && g.present[j]
}

func (g *objectsGen) newCtx() *renderCtx {
	return &renderCtx{present: g.has, written: map[string]bool{}, objects: true}
}

// rewriter returns the Rewriter of the incoming model that writes
// Objects, rendering with ctx.
//
// place, when not nil, holds edits to add, by the offsets of streamView:
// in the incoming document, or in a patched copy's bytes after it.
func (g *objectsGen) rewriter(ctx *renderCtx, place *jsonedit.Rewriter) *jsonedit.Rewriter {
	wb, data, objs := g.wb, g.data, g.wb.in.Objects
	r := jsonedit.NewRewriter(data)
	add := func(r *jsonedit.Rewriter, off int, e *jsonedit.Edit) {
		re := r.At(off)
		re.Adds = append(re.Adds, e.Adds...)
		if e.Write != nil {
			re.Write = e.Write
		}
	}
	inPatched := map[*patchedSub][]int{}
	if place != nil {
		place.Each(func(off int, e *jsonedit.Edit) {
			if off < len(data) {
				add(r, off, e)
				return
			}
			pc := g.segAt(off)
			inPatched[pc] = append(inPatched[pc], off)
		})
	}
	for _, off := range g.drops {
		r.At(off).Remove = true
	}
	for _, c := range g.top {
		pc := g.patched[c]
		r.At(int(objs[c].Start)).Write = func(w jsonedit.Writer, s, e int) error {
			pr := jsonedit.NewRewriter(pc.data)
			for _, ref := range pc.refs {
				pr.At(ref.off).Write = func(w jsonedit.Writer, s, e int) error {
					if ctx.expandedAt != nil && !ctx.has(wb.snap.ID(ref.object)) {
						ctx.expandedAt[pc.base+ref.off] = true
					}
					return wb.expand(w, ref.object, pc.data[s:e], ctx)
				}
			}
			for _, off := range inPatched[pc] {
				add(pr, off-pc.base, place.Lookup(off))
			}
			return pr.Value(w, 0, len(pc.data))
		}
	}
	for c, px := range g.proxies {
		r.At(int(objs[c].Start)).Write = func(w jsonedit.Writer, s, e int) error {
			pr := jsonedit.NewRewriter(px.out)
			for _, ref := range px.refs {
				pr.At(ref.off).Write = func(w jsonedit.Writer, s, e int) error {
					return wb.expand(w, ref.object, px.out[s:e], ctx)
				}
			}
			for _, h := range px.holes {
				pr.At(h.out).Write = func(w jsonedit.Writer, s, e int) error {
					return r.Value(w, h.vs, h.ve)
				}
			}
			return pr.Value(w, 0, len(px.out))
		}
	}
	for _, ref := range g.expand {
		r.At(ref.off).Write = func(w jsonedit.Writer, s, e int) error {
			if ctx.expandedAt != nil && !ctx.has(wb.snap.ID(ref.object)) {
				ctx.expandedAt[ref.off] = true
			}
			return wb.expand(w, ref.object, data[s:e], ctx)
		}
	}
	return r
}

// proxyMin is the size in bytes from which a patched subscriber is
// written as a proxy, not held patched (a variable for the tests).
var proxyMin = 1 << 20

// proxySub is a large patched subscriber copy, held as the merge patches'
// result on a proxy of it: the members the patches name (and the header)
// as they are, every other member's value replaced by a placeholder
// string, a hole that Objects' writer fills with that member's value
// copied from the model. The patches change only the members they name,
// so the proxy's result, holes filled, is the patched copy's bytes.
type proxySub struct {
	out   []byte
	refs  []snapRef // references in out to destroyed objects
	holes []proxyHole
	// named holds the offsets in the model of the values of the members
	// written in out.
	named [][2]int
}

// proxyHole is a placeholder at out in proxySub.out standing for the
// model's bytes [vs, ve).
type proxyHole struct{ out, vs, ve int }

// copies reports whether the model's offset off is in a hole: the proxy's
// writer copies it from the model rather than from out.
func (px *proxySub) copies(off int) bool {
	for _, n := range px.named {
		if off >= n[0] && off < n[1] {
			return false
		}
	}
	return true
}

// newProxy applies patches to incoming copy c through a proxy; rp writes
// the model with the dropped objects out and patched copies in. The
// errors are CheckPatch's on the whole copy.
func (wb *writeBack) newProxy(c int32, patches []json.RawMessage, rp *jsonedit.Rewriter, data []byte) (*proxySub, error) {
	in := wb.in
	o := &in.Objects[c]
	named := map[string]bool{"?": true}
	for _, p := range patches {
		p = bytes.TrimSpace(p)
		if !json.Valid(p) || p[0] != '{' {
			continue // CheckPatch says why
		}
		ms, _ := jsonedit.Members(p, 0)
		for _, m := range ms {
			if k, err := jsonedit.DecodeString(p[m.Start:m.KeyEnd]); err == nil {
				named[k] = true
			}
		}
	}
	var nonce [12]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, fmt.Errorf("write-back: %w", err)
	}
	placeholder := func(k int) string { return fmt.Sprintf(`"objgc-hole-%x-%d"`, nonce, k) }
	px := &proxySub{}
	rq := jsonedit.NewRewriter(data)
	drops := jsonedit.NewRewriter(data) // the dropped objects out, for the depth
	rp.Each(func(off int, e *jsonedit.Edit) {
		if e.Remove {
			rq.At(off).Remove = true
			drops.At(off).Remove = true
		}
	})
	ms, _ := jsonedit.Members(data, int(o.Start))
	holes := map[string][2]int{}
	deepest := 0
	for k, m := range ms {
		if e := rp.Lookup(m.VS); e != nil && e.Remove {
			continue
		}
		key, err := jsonedit.DecodeString(data[m.Start:m.KeyEnd])
		if err == nil && named[key] {
			rq.At(m.VS).Write = func(w jsonedit.Writer, s, e int) error { return rp.Value(w, s, e) }
			px.named = append(px.named, [2]int{m.VS, m.VE})
			continue
		}
		ph := placeholder(k)
		holes[ph] = [2]int{m.VS, m.VE}
		rq.At(m.VS).Write = func(w jsonedit.Writer, s, e int) error { _, err := w.WriteString(ph); return err }
		var nw nestingWriter
		if err := drops.Value(&nw, m.VS, m.VE); err != nil {
			return nil, err
		}
		deepest = max(deepest, nw.deepest)
	}
	var b bytes.Buffer
	if err := rq.Inner(&b, int(o.Start), int(o.End)); err != nil {
		return nil, err
	}
	obj := b.Bytes()
	for _, patch := range patches {
		var err error
		if obj, err = applyPatch(obj, patch); err == nil {
			err = checkNesting(max(nesting(obj), 1+deepest), in.Depth(c))
		}
		if err != nil {
			return nil, fmt.Errorf("write-back: patch for subscriber %s at %s: %w", in.ID(c), in.ObjectPath(c), err)
		}
	}
	px.out = obj
	outMs, _ := jsonedit.Members(obj, 0)
	for _, m := range outMs {
		if h, ok := holes[string(obj[m.VS:m.VE])]; ok {
			px.holes = append(px.holes, proxyHole{out: m.VS, vs: h[0], ve: h[1]})
		}
	}
	if len(px.holes) != len(holes) {
		return nil, fmt.Errorf("write-back: internal error: %d of %d members of %s lost in patching", len(holes)-len(px.holes), len(holes), in.ID(c))
	}
	refs, err := wb.destroyedRefs(obj)
	if err != nil {
		return nil, err
	}
	px.refs = refs
	return px, nil
}

// destroyedRefs returns the references to objects destroyed in this run
// in the object tree obj, by offset in obj.
func (wb *writeBack) destroyedRefs(obj []byte) ([]snapRef, error) {
	t, err := reload(append(append([]byte(`{"Objects":`), obj...), '}'))
	if err != nil {
		return nil, err
	}
	const shift = len(`{"Objects":`)
	var refs []snapRef
	t.StringsOfLength(wb.snap.MightBeID, func(sv snapshot.StringValue) bool {
		if i, ok := wb.snap.Lookup(sv.Value); ok && wb.isDestroyed(i) {
			refs = append(refs, snapRef{off: sv.Offset - shift, object: i})
		}
		return true
	})
	return refs, nil
}

// nestingWriter counts how deep the arrays and objects of the JSON
// written to it nest (as nesting does), keeping nothing else.
type nestingWriter struct {
	depth, deepest int
	inString, esc  bool
}

func (n *nestingWriter) WriteByte(c byte) error {
	switch {
	case n.esc:
		n.esc = false
	case n.inString:
		switch c {
		case '\\':
			n.esc = true
		case '"':
			n.inString = false
		}
	case c == '"':
		n.inString = true
	case c == '{' || c == '[':
		n.depth++
		n.deepest = max(n.deepest, n.depth)
	case c == '}' || c == ']':
		n.depth--
	}
	return nil
}

func (n *nestingWriter) Write(p []byte) (int, error) {
	for _, c := range p {
		n.WriteByte(c)
	}
	return len(p), nil
}

func (n *nestingWriter) WriteString(s string) (int, error) {
	for i := 0; i < len(s); i++ {
		n.WriteByte(s[i])
	}
	return len(s), nil
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
	present func(id string) bool // ids of the model being written into
	written map[string]bool      // destroyed objects written in full so far
	objects bool                 // writing Objects (else ObjectsCopy)
	// When not nil, full records the ids of the other objects written in
	// full inside destroyed ones, and expandedAt the incoming offsets of
	// the references written in full (objectsGen.rewriter).
	full       map[string]bool
	expandedAt map[int]bool
}

func (c *renderCtx) has(id string) bool {
	if c.written[id] {
		return true
	}
	return c.present(id)
}

// expand writes a reference to the destroyed snapshot object i: in full
// the first time, else as the bare reference raw.
func (wb *writeBack) expand(b jsonedit.Writer, i int32, raw []byte, ctx *renderCtx) error {
	id := wb.snap.ID(i)
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
func (wb *writeBack) render(b jsonedit.Writer, i int32, ctx *renderCtx) error {
	snap := wb.snap
	objs := snap.Objects
	data := snap.Doc.Data
	o := &objs[i]
	r := jsonedit.NewRewriter(data)
	flag := func(b jsonedit.Writer, s, e int) error {
		return flagHeader(b, data, s)
	}
	if wb.isDestroyed(snap.First(i)) {
		r.At(int(snap.HeaderStart(i))).Write = flag
	}
	bare := func(id string) func(b jsonedit.Writer, s, e int) error {
		return func(b jsonedit.Writer, s, e int) error {
			return jsonedit.WriteString(b, id)
		}
	}
	lo := sort.Search(len(objs), func(k int) bool { return objs[k].End > o.Start })
	for c := int32(lo); c < i; c++ { // closing order: the copies inside i
		oc := &objs[c]
		if !oc.HasID() {
			continue
		}
		id := snap.ID(c)
		switch {
		case wb.isDestroyed(snap.First(c)):
			r.At(int(snap.HeaderStart(c))).Write = flag
			r.At(int(oc.Start)).Write = func(b jsonedit.Writer, s, e int) error {
				// ObjectsCopy always keeps the whole copy: a doomed object
				// that still exists may sit inside it.
				if ctx.objects && ctx.has(id) {
					return jsonedit.WriteString(b, id)
				}
				ctx.written[id] = true
				return r.Inner(b, s, e)
			}
		case wb.d.IsDoomed(snap.First(c)):
			if ctx.objects {
				r.At(int(oc.Start)).Remove = true
			}
		default:
			if ctx.present(id) {
				r.At(int(oc.Start)).Write = bare(id)
			} else if ctx.full != nil {
				r.At(int(oc.Start)).Write = func(b jsonedit.Writer, s, e int) error {
					ctx.full[id] = true
					return r.Inner(b, s, e)
				}
			}
		}
	}
	for _, ref := range wb.snapRefs(int(o.Start), int(o.End)) {
		obj := ref.object
		r.At(ref.off).Write = func(b jsonedit.Writer, s, e int) error {
			return wb.expand(b, obj, data[s:e], ctx)
		}
	}
	return r.Value(b, int(o.Start), int(o.End))
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

// objectsCopy returns the writer of the ObjectsCopy value, given the
// Objects value built: the places of the retained objects are found in
// an index of it, before anything is written.
func (wb *writeBack) objectsCopy(objects []byte) (func(jsonedit.Writer) error, error) {
	wrapped := make([]byte, 0, len(objects)+13)
	wrapped = append(wrapped, `{"Objects":`...)
	wrapped = append(wrapped, objects...)
	wrapped = append(wrapped, '}')
	t, err := reload(wrapped)
	if err != nil {
		return nil, err
	}
	present := func(id string) bool { _, ok := t.Lookup(id); return ok }
	pl := wb.newPlacer(present, t.Doc.Data, t.Null, t.Start, t.End)
	pl.lookup = func(id string) (int, bool) {
		j, ok := t.Lookup(id)
		if !ok {
			return 0, false
		}
		return int(t.Objects[j].Start), true
	}
	if err := pl.placeAll(present); err != nil {
		return nil, err
	}
	return func(w jsonedit.Writer) error {
		return pl.write(w, present, func(w jsonedit.Writer) error { return pl.r.Value(w, t.Start, t.End) })
	}, nil
}

func (wb *writeBack) newPlacer(present func(string) bool, data []byte, null bool, start, end int) *placer {
	return &placer{wb: wb, data: data, null: null, start: start, end: end, r: jsonedit.NewRewriter(data), root: -1,
		retainedAt: map[int]*[]int32{}, keys: map[string]bool{}, ms: map[int][]jsonedit.Member{}, snapMs: map[int][]jsonedit.Member{}}
}

// placeAll places the topmost retained objects (those not written inside
// the copy of another retained one); present tells the ids of Objects.
func (pl *placer) placeAll(present func(string) bool) error {
	wb := pl.wb
	for _, p := range wb.p.Objects {
		if i := p.Snapshot; wb.retained[i] && !wb.covered(i, present) {
			if err := pl.place(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// write writes ObjectsCopy: value writes Objects with the placer's edits.
func (pl *placer) write(w jsonedit.Writer, present func(string) bool, value func(jsonedit.Writer) error) error {
	pl.ctx = &renderCtx{present: present, written: map[string]bool{}}
	switch {
	case pl.root >= 0:
		return pl.wb.render(w, pl.root, pl.ctx)
	case pl.null:
		w.WriteString(`{"` + RetainedKey + `": `)
		if err := pl.writeList(w, pl.nullRoot); err != nil {
			return err
		}
		_, err := w.WriteString("}")
		return err
	default:
		return value(w)
	}
}

// errNotStreamed: the places of the retained objects are not all in
// parts of Objects copied from the incoming model (see streamView).
var errNotStreamed = errors.New("ObjectsCopy cannot be streamed")

// objectsCopyStreamed returns the writer of the ObjectsCopy value written
// from the incoming model's bytes, as Objects is, with the retained
// objects added at their places; errNotStreamed when a place lies where
// the incoming model's bytes do not stand for Objects' (inside a patched
// subscriber or a destroyed object written in full, or in a container
// that loses a dropped object), for objectsCopy to do.
func (wb *writeBack) objectsCopyStreamed() (func(jsonedit.Writer) error, error) {
	g := wb.gen
	in := wb.in
	present := func(string) bool { return false }
	var pl *placer
	if g == nil {
		pl = wb.newPlacer(present, nil, true, 0, 0)
		pl.lookup = func(string) (int, bool) { return 0, false }
	} else {
		// What Objects holds beside the incoming model's objects: the
		// destroyed objects written in full, and objects inside them; a
		// dry run of Objects finds them.
		ctx := g.newCtx()
		ctx.full, ctx.expandedAt = map[string]bool{}, map[int]bool{}
		if err := g.rewriter(ctx, nil).Value(discard{}, in.Start, in.End); err != nil {
			return nil, err
		}
		present = func(id string) bool { return g.has(id) || ctx.written[id] || ctx.full[id] }
		v := &streamView{g: g, present: present, expandedAt: ctx.expandedAt, drops: map[int]bool{}}
		for _, off := range g.drops {
			v.drops[off] = true
		}
		pl = wb.newPlacer(present, g.data, false, v.root(), in.End)
		pl.view = v
		pl.lookup = v.lookup
	}
	if err := pl.placeAll(present); err != nil {
		return nil, err
	}
	if pl.view != nil && pl.view.gone {
		return nil, errNotStreamed
	}
	return func(w jsonedit.Writer) error {
		return pl.write(w, present, func(w jsonedit.Writer) error {
			return g.rewriter(g.newCtx(), pl.r).Value(w, in.Start, in.End)
		})
	}, nil
}

// streamView stands the incoming model for Objects while the places of
// the retained objects are found, and notes (gone) when a place is not
// in a part that Objects copies from it unchanged in structure.
type streamView struct {
	g          *objectsGen
	present    func(id string) bool // ids in Objects
	expandedAt map[int]bool         // incoming references written in full
	drops      map[int]bool         // starts of the dropped copies
	firstLeft  map[int32]int32      // first copy -> first copy left, when that is another
	trees      map[*patchedSub]*snapshot.Tree
	gone       bool
}

func (v *streamView) segAt(off int) *patchedSub { return v.g.segAt(off) }

// lookup returns the offset of the first copy of id in Objects: in the
// incoming document, or, inside a patched subscriber, in its bytes.
func (v *streamView) lookup(id string) (int, bool) {
	in := v.g.wb.in
	j, ok := in.Lookup(id)
	if !ok || !v.g.present[j] {
		if v.present(id) {
			v.gone = true // only inside a destroyed object written in full
		}
		return 0, false
	}
	c := j
	if v.g.removed[j] {
		if v.firstLeft == nil {
			v.firstLeft = map[int32]int32{}
			for k := range in.Objects {
				f := in.First(int32(k))
				if cur, ok := v.firstLeft[f]; !v.g.removed[k] && (!ok || in.Objects[k].Start < in.Objects[cur].Start) {
					v.firstLeft[f] = int32(k)
				}
			}
		}
		c = v.firstLeft[j]
	}
	for e := c; e >= 0; e = in.Enclosing(e) {
		if v.g.proxies[e] != nil {
			v.gone = true // in a proxy: its members are not all in the bytes held
			return 0, false
		}
	}
	for e := c; e >= 0; e = in.Enclosing(e) {
		if pc := v.g.patched[e]; pc != nil && pc.base > 0 {
			t, err := v.patchedTree(pc)
			if err != nil {
				v.gone = true
				return 0, false
			}
			k, ok := t.Lookup(id)
			if !ok {
				v.gone = true
				return 0, false
			}
			return pc.base + int(t.Objects[k].Start) - len(`{"Objects":`), true
		}
	}
	return int(in.Objects[c].Start), true
}

// patchedTree indexes the bytes of a patched copy, once.
func (v *streamView) patchedTree(pc *patchedSub) (*snapshot.Tree, error) {
	if t := v.trees[pc]; t != nil {
		return t, nil
	}
	t, err := reload(append(append([]byte(`{"Objects":`), pc.data...), '}'))
	if err != nil {
		return nil, err
	}
	if v.trees == nil {
		v.trees = map[*patchedSub]*snapshot.Tree{}
	}
	v.trees[pc] = t
	return t, nil
}

// root returns the offset of the root of Objects.
func (v *streamView) root() int {
	in := v.g.wb.in
	if c := in.ObjectAt(in.Start); c >= 0 && int(in.Objects[c].Start) == in.Start {
		if v.g.proxies[c] != nil {
			v.gone = true
		}
		if pc := v.g.patched[c]; pc != nil && pc.base > 0 {
			return pc.base
		}
	}
	return in.Start
}

// container notes the members of a container looked at: none may be a
// dropped copy, which Objects leaves out.
func (v *streamView) container(ms []jsonedit.Member) {
	for _, m := range ms {
		if v.drops[m.VS] {
			v.gone = true
		}
	}
}

// value notes a value a path goes through: not a reference written in
// full.
func (v *streamView) value(off int) {
	if v.expandedAt[off] {
		v.gone = true
	}
}

// discard is a jsonedit.Writer that keeps nothing.
type discard struct{}

func (discard) Write(p []byte) (int, error)       { return len(p), nil }
func (discard) WriteString(s string) (int, error) { return len(s), nil }
func (discard) WriteByte(byte) error              { return nil }

// covered reports whether the retained snapshot object i is written inside
// the copy of a retained object enclosing it, so that it needs no place of
// its own: no copy between them is replaced by a bare reference, as render
// does for the objects of out, the Objects value.
func (wb *writeBack) covered(i int32, present func(id string) bool) bool {
	snap := wb.snap
	for c := snap.Enclosing(i); c >= 0; c = snap.Enclosing(c) {
		f := snap.First(c)
		switch {
		case wb.d.IsDoomed(f):
			if wb.retained[f] && f == c {
				return true
			}
		case snap.Objects[c].HasID():
			if present(snap.ID(c)) {
				return false // written as a bare reference
			}
		}
	}
	return false
}

// placer puts the retained objects into ObjectsCopy.
type placer struct {
	wb *writeBack
	// The Objects value: lookup returns the offset in data of the first
	// copy of an id; null, start and end are the value's.
	lookup     func(id string) (int, bool)
	null       bool
	start, end int
	data       []byte
	r          *jsonedit.Rewriter // the edits placing the objects
	ctx        *renderCtx
	// view, when not nil, is the incoming model standing for Objects
	// (the streamed ObjectsCopy): it is told each place looked at.
	view *streamView

	root       int32                     // retained object that becomes the whole value, or -1
	nullRoot   []int32                   // retained objects when Objects is null
	retainedAt map[int]*[]int32          // new RetainedKey arrays, by the object's offset
	keys       map[string]bool           // properties added, by container offset and key
	ms         map[int][]jsonedit.Member // members of the containers looked at, by offset
	snapMs     map[int][]jsonedit.Member // the same in the snapshot
}

func (pl *placer) snapMembers(off int) []jsonedit.Member {
	ms, ok := pl.snapMs[off]
	if !ok {
		ms, _ = jsonedit.Members(pl.wb.snap.Doc.Data, off)
		pl.snapMs[off] = ms
	}
	return ms
}

// members lists the members of the container at off once: placing many
// objects in one large container (the root) stays linear.
func (pl *placer) members(off int) []jsonedit.Member {
	ms, ok := pl.ms[off]
	if !ok {
		d, base := pl.seg(off)
		ms, _ = jsonedit.Members(d, off-base)
		for k := range ms {
			m := &ms[k]
			m.Lead, m.Start, m.KeyEnd, m.VS, m.VE = m.Lead+base, m.Start+base, m.KeyEnd+base, m.VS+base, m.VE+base
		}
		pl.ms[off] = ms
		if pl.view != nil {
			pl.view.container(ms)
		}
	}
	return ms
}

// findKey returns the member with key of the object at off.
func (pl *placer) findKey(off int, key string) (jsonedit.Member, bool) {
	if pl.at(off) != '{' {
		return jsonedit.Member{}, false
	}
	for _, m := range pl.members(off) {
		if k, err := jsonedit.DecodeString(pl.bytes(m.Start, m.KeyEnd)); err == nil && k == key {
			return m, true
		}
	}
	return jsonedit.Member{}, false
}

// seg returns the bytes holding offset off and the offset of their
// start: the placer's data, or a patched subscriber's bytes (streamView).
func (pl *placer) seg(off int) ([]byte, int) {
	if off < len(pl.data) || pl.view == nil {
		return pl.data, 0
	}
	pc := pl.view.segAt(off)
	return pc.data, pc.base
}

func (pl *placer) at(off int) byte {
	d, base := pl.seg(off)
	return d[off-base]
}

func (pl *placer) bytes(s, e int) []byte {
	d, base := pl.seg(s)
	return d[s-base : e-base]
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
		from = int(snap.Objects[encl].Start)
	}
	segs := pathTo(snap.Doc.Data, from, int(o.Start), pl.snapMembers)
	anchor := -1
	switch {
	case encl >= 0:
		ownerIdx := snap.First(encl)
		if snap.Objects[ownerIdx].HasID() {
			if off, ok := pl.lookup(snap.ID(ownerIdx)); ok {
				anchor = off
			}
		}
	case pl.null:
		if len(segs) == 0 && pl.root < 0 {
			pl.root = i
			return nil
		}
	default:
		anchor = pl.start
	}
	if anchor >= 0 && len(segs) > 0 && pl.atPlace(i, anchor, segs) {
		return nil
	}
	return pl.fallback(i)
}

// atPlace puts i at the path segs below the object (or root) at anchor,
// and reports whether that place exists.
func (pl *placer) atPlace(i int32, anchor int, segs []seg) bool {
	pos := anchor
	for k, sg := range segs {
		if k > 0 && pl.at(pos) == '{' && pl.hasHeader(pos) {
			return false // an object in between: not the same owner
		}
		last := k == len(segs)-1
		if sg.raw == nil {
			if pl.at(pos) != '[' {
				return false
			}
			if last {
				pl.r.At(pos).Adds = append(pl.r.At(pos).Adds, jsonedit.Addition{Value: pl.writer(i)})
				return true
			}
			ms := pl.members(pos)
			if sg.index >= len(ms) {
				return false
			}
			pos = ms[sg.index].VS
			if pl.view != nil {
				pl.view.value(pos)
			}
			continue
		}
		if pl.at(pos) != '{' {
			return false
		}
		m, ok := pl.findKey(pos, sg.key)
		if last {
			id := pl.wb.snap.ID(i)
			switch {
			case !ok:
				k := fmt.Sprint(pos, "\x00", sg.key)
				if pl.keys[k] {
					return false
				}
				pl.keys[k] = true
				pl.r.At(pos).Adds = append(pl.r.At(pos).Adds, jsonedit.Addition{Key: sg.raw, Value: pl.writer(i)})
				return true
			case pl.r.Lookup(m.VS) == nil && (string(pl.bytes(m.VS, m.VE)) == "null" || jsonedit.IsString(pl.bytes(m.VS, m.VE), 0, m.VE-m.VS, id)):
				w := pl.writer(i)
				pl.r.At(m.VS).Write = func(b jsonedit.Writer, s, e int) error { return w(b) }
				return true
			}
			return false
		}
		if !ok {
			return false
		}
		pos = m.VS
		if pl.view != nil {
			pl.view.value(pos)
		}
	}
	return false
}

func (pl *placer) writer(i int32) func(b jsonedit.Writer) error {
	return func(b jsonedit.Writer) error { return pl.wb.render(b, i, pl.ctx) }
}

func (pl *placer) writeList(b jsonedit.Writer, list []int32) error {
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
	for a := snap.Owner(i); a >= 0; a = snap.Owner(a) {
		if !snap.Objects[a].HasID() {
			continue
		}
		if off, ok := pl.lookup(snap.ID(a)); ok && pl.retainIn(off, i) {
			return nil
		}
	}
	switch {
	case pl.null:
		pl.nullRoot = append(pl.nullRoot, i)
		return nil
	case pl.at(pl.start) == '[':
		if pl.view != nil {
			pl.members(pl.start)
		}
		pl.r.At(pl.start).Adds = append(pl.r.At(pl.start).Adds, jsonedit.Addition{Value: pl.writer(i)})
		return nil
	case pl.retainIn(pl.start, i):
		return nil
	}
	return fmt.Errorf("write-back: no place for %s (%s) in ObjectsCopy: the root's %q is not an array",
		snap.ID(i), snap.ObjectPath(i), RetainedKey)
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
		if pl.at(m.VS) != '[' {
			return false
		}
		pl.r.At(m.VS).Adds = append(pl.r.At(m.VS).Adds, jsonedit.Addition{Value: pl.writer(i)})
		return true
	}
	list := &[]int32{i}
	pl.retainedAt[off] = list
	pl.r.At(off).Adds = append(pl.r.At(off).Adds, jsonedit.Addition{Key: []byte(`"` + RetainedKey + `"`),
		Value: func(b jsonedit.Writer) error { return pl.writeList(b, *list) }})
	return true
}

// attributes returns the writer of the Attributes value: attributes
// without the rows [objectId, key, value] of destroyed objects.
func (wb *writeBack) attributes(raw json.RawMessage, destroyedFlags []bool) (func(jsonedit.Writer) error, error) {
	data := bytes.TrimSpace(raw)
	if len(data) == 0 || string(data) == "null" {
		return func(w jsonedit.Writer) error { _, err := w.WriteString("[]"); return err }, nil
	}
	if !json.Valid(data) {
		return nil, errors.New("write-back: Attributes is not valid JSON")
	}
	if data[0] != '[' {
		return nil, errors.New("write-back: Attributes: expected an array of [objectId, key, value] rows")
	}
	gone := map[string]bool{}
	for k := range wb.p.Objects {
		if destroyedFlags[k] {
			gone[wb.p.ID(k)] = true
		}
	}
	for _, i := range wb.d.Dropped {
		gone[wb.in.ID(i)] = true
	}
	r := jsonedit.NewRewriter(data)
	rows, _ := jsonedit.Members(data, 0)
	for _, row := range rows {
		if data[row.VS] != '[' {
			continue
		}
		cells, _ := jsonedit.Members(data, row.VS)
		if len(cells) == 0 || data[cells[0].VS] != '"' {
			continue
		}
		if id, err := jsonedit.DecodeString(data[cells[0].VS:cells[0].VE]); err == nil && gone[id] {
			r.At(row.VS).Remove = true
		}
	}
	return func(w jsonedit.Writer) error { return r.Value(w, 0, len(data)) }, nil
}

// pathTo returns the path from the container value at from down to the
// value starting at off; list gives the members of a container.
func pathTo(data []byte, from, off int, list func(open int) []jsonedit.Member) []seg {
	var segs []seg
	pos := from
	for pos != off {
		if c := data[pos]; c != '{' && c != '[' {
			return segs
		}
		ms := list(pos)
		k := sort.Search(len(ms), func(k int) bool { return ms[k].VE > off })
		if k == len(ms) || off < ms[k].VS {
			return segs
		}
		m := ms[k]
		sg := seg{index: k}
		if data[pos] == '{' {
			sg.raw = data[m.Start:m.KeyEnd]
			sg.key, _ = jsonedit.DecodeString(sg.raw)
		}
		segs = append(segs, sg)
		pos = m.VS
	}
	return segs
}

// flagHeader writes the header at hs with "destroyed": true: an existing
// "destroyed" value is replaced, else the key is added first.
func flagHeader(b jsonedit.Writer, data []byte, hs int) error {
	ms, end := jsonedit.Members(data, hs)
	cur := hs
	found := false
	for _, m := range ms {
		if k, err := jsonedit.DecodeString(data[m.Start:m.KeyEnd]); err != nil || k != "destroyed" {
			continue
		}
		found = true
		if string(data[m.VS:m.VE]) != "true" {
			b.Write(data[cur:m.VS])
			b.WriteString("true")
			cur = m.VE
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
	lead, sep := data[ms[0].Lead:ms[0].Start], data[ms[0].KeyEnd:ms[0].VS]
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
