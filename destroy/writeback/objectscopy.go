package writeback

import (
	"errors"
	"fmt"

	"github.com/objgc/objgc/internal/jsonedit"
	"github.com/objgc/objgc/snapshot"
)

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
		w.WriteString(`{"` + retainedKey + `": `)
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

// reload indexes an Objects value wrapped as {"Objects": value}.
func reload(wrapped []byte) (*snapshot.Tree, error) {
	_, t, err := snapshot.LoadModel(snapshot.NewDocument("write-back", wrapped))
	if err != nil {
		return nil, fmt.Errorf("write-back: internal error: the model written back does not load: %w", err)
	}
	return t, nil
}
