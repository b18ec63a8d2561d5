package writeback

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/objgc/objgc/internal/jsonedit"
	"github.com/objgc/objgc/snapshot"
)

// objects returns the writer of the Objects value: the incoming model
// with the copies of dropped objects removed, patched subscribers written
// from their patched bytes, and references to destroyed objects expanded.
// The patches are applied here, so that their errors come before any
// writing.
func (wb *writeBack) objects(patches map[string][]json.RawMessage) (func(jsonedit.Writer) error, error) {
	in := wb.in
	if in.Null {
		// The environment is deleted: no subscriber is left to patch.
		for _, id := range sortedKeys(patches) {
			if _, ok := wb.snap.Lookup(id); !ok {
				return nil, fmt.Errorf("write-back: patch for subscriber %s: no such object in either model", id)
			}
		}
		return writeNull, nil
	}
	sv := wb.survivors()
	if sv.root >= 0 && sv.dropped[in.First(sv.root)] {
		return writeNull, nil // the root itself is dropped
	}
	subs, err := wb.subscriberPatches(patches)
	if err != nil {
		return nil, err
	}
	sp := newSubPatcher(in, sv, subs)
	top, proxies, err := wb.metCopies(sp, sv.removed)
	if err != nil {
		return nil, err
	}
	if err := wb.patchedRefs(top, sp.patched); err != nil {
		return nil, err
	}
	data, objs := in.Doc.Data, in.Objects
	g := &objectsGen{wb: wb, data: data, removed: sv.removed, present: sv.present, patched: sp.patched, top: top, proxies: proxies}
	for _, dr := range wb.d.Dangling {
		if wb.destroyed[dr.Doomed] {
			g.expand = append(g.expand, snapRef{off: dr.Offset, object: dr.Doomed})
		}
	}
	for c := range objs {
		if sv.dropped[in.First(int32(c))] {
			g.drops = append(g.drops, int(objs[c].Start))
		}
	}
	wb.gen = g
	if len(sp.order) == 0 && len(g.expand) == 0 && len(g.drops) == 0 {
		return func(w jsonedit.Writer) error { _, err := w.Write(data[in.Start:in.End]); return err }, nil
	}
	return func(w jsonedit.Writer) error {
		return g.rewriter(g.newCtx(), nil).Value(w, in.Start, in.End)
	}, nil
}

// writeNull writes a null value (Objects when the environment is deleted
// or its root dropped).
func writeNull(w jsonedit.Writer) error { _, err := w.WriteString("null"); return err }

// survivors says which copies of the incoming model a dropped object
// takes out of Objects.
type survivors struct {
	dropped []bool // by first copy: the object is in Diff.Dropped
	removed []bool // by copy: gone with a dropped object, itself or one enclosing it
	present []bool // by first copy: a copy is left
	root    int32  // the root copy, -1 when none
}

func (wb *writeBack) survivors() survivors {
	in := wb.in
	objs := in.Objects
	sv := survivors{dropped: make([]bool, len(objs)), removed: make([]bool, len(objs)), present: make([]bool, len(objs)), root: -1}
	for _, i := range wb.d.Dropped {
		sv.dropped[i] = true
	}
	// Copies are in closing order: enclosing ones come later.
	for c := len(objs) - 1; c >= 0; c-- {
		o := &objs[c]
		e := in.Enclosing(int32(c))
		f := in.First(int32(c))
		sv.removed[c] = sv.dropped[f] || e >= 0 && sv.removed[e]
		if !sv.removed[c] {
			sv.present[f] = true
		}
		if int(o.Start) == in.Start {
			sv.root = int32(c)
		}
	}
	return sv
}

// subscriberPatches returns the patches by the first incoming copy of
// their subscriber. A subscriber only in the snapshot is doomed: it
// leaves the model, and its patches with it. One in neither model is an
// error.
func (wb *writeBack) subscriberPatches(patches map[string][]json.RawMessage) (map[int32][]json.RawMessage, error) {
	subs := map[int32][]json.RawMessage{}
	for _, id := range sortedKeys(patches) {
		j, ok := wb.in.Lookup(id)
		if !ok {
			if _, ok := wb.snap.Lookup(id); ok {
				continue // a doomed subscriber leaves the model
			}
			return nil, fmt.Errorf("write-back: patch for subscriber %s: no such object in either model", id)
		}
		subs[j] = patches[id]
	}
	return subs, nil
}

// subPatcher applies the patches to the subscriber copies left in the
// incoming model, each copy once, when first asked.
type subPatcher struct {
	in      *snapshot.Tree
	subs    map[int32][]json.RawMessage // by first copy
	rp      *jsonedit.Rewriter          // the model with dropped objects out, patched copies in
	order   []int32                     // the patched copies left, in document order
	patched map[int32]*patchedSub       // by copy: the copies patched so far
}

func newSubPatcher(in *snapshot.Tree, sv survivors, subs map[int32][]json.RawMessage) *subPatcher {
	objs := in.Objects
	sp := &subPatcher{in: in, subs: subs, patched: map[int32]*patchedSub{}}
	// The patched bytes of each subscriber copy left, computed in
	// document order, a copy inside another first (the outer one's bytes
	// hold the inner one's patched).
	for c := range objs {
		if !sv.removed[c] && subs[in.First(int32(c))] != nil {
			sp.order = append(sp.order, int32(c))
		}
	}
	sort.Slice(sp.order, func(a, b int) bool { return objs[sp.order[a]].Start < objs[sp.order[b]].Start })
	sp.rp = jsonedit.NewRewriter(in.Doc.Data)
	for c := range objs {
		if sv.dropped[in.First(int32(c))] {
			sp.rp.At(int(objs[c].Start)).Remove = true
		}
	}
	for _, c := range sp.order {
		sp.rp.At(int(objs[c].Start)).Write = func(w jsonedit.Writer, s, e int) error {
			pc, err := sp.patch(c)
			if err != nil {
				return err
			}
			_, err = w.Write(pc.data)
			return err
		}
	}
	return sp
}

// patch returns copy c with its subscriber's patches applied (checkPatch),
// computing it the first time.
func (sp *subPatcher) patch(c int32) (*patchedSub, error) {
	if pc := sp.patched[c]; pc != nil {
		return pc, nil
	}
	in := sp.in
	o := &in.Objects[c]
	var cur bytes.Buffer
	if err := sp.rp.Inner(&cur, int(o.Start), int(o.End)); err != nil {
		return nil, err
	}
	obj := cur.Bytes()
	for _, patch := range sp.subs[in.First(c)] {
		var err error
		if obj, err = checkPatch(obj, patch, in.Depth(c)); err != nil {
			return nil, fmt.Errorf("write-back: patch for subscriber %s at %s: %w", in.ID(c), in.ObjectPath(c), err)
		}
	}
	pc := &patchedSub{data: obj}
	sp.patched[c] = pc
	return pc, nil
}

// metCopies returns the patched copies Objects' writer meets itself (the
// others are inside the patched bytes of one it meets), in document
// order: those not inside another, and those in a member that a proxy
// copies from the model. A large one it meets is a proxy (proxySub); the
// others are patched now, their bytes held (top).
func (wb *writeBack) metCopies(sp *subPatcher, removed []bool) (top []int32, proxies map[int32]*proxySub, err error) {
	in := wb.in
	objs := in.Objects
	proxies = map[int32]*proxySub{}
	met := map[int32]bool{}
	for _, c := range sp.order {
		e := in.Enclosing(c)
		for e >= 0 && (sp.subs[in.First(e)] == nil || removed[e]) {
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
			px, err := wb.newProxy(c, sp.subs[in.First(c)], sp.rp, in.Doc.Data)
			if err != nil {
				return nil, nil, err
			}
			proxies[c] = px
			continue
		}
		if _, err := sp.patch(c); err != nil {
			return nil, nil, err
		}
		top = append(top, c)
	}
	return top, proxies, nil
}

// patchedRefs places the held patched copies (top) after the incoming
// document in the offsets of streamView, and finds the references to
// destroyed objects in their bytes: a patch may have written some.
func (wb *writeBack) patchedRefs(top []int32, patched map[int32]*patchedSub) error {
	base := len(wb.in.Doc.Data)
	for _, c := range top {
		pc := patched[c]
		pc.base = base
		base += len(pc.data)
		refs, err := wb.destroyedRefs(pc.data)
		if err != nil {
			return err
		}
		pc.refs = refs
	}
	return nil
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
