package writeback

import (
	"fmt"
	"sort"

	"github.com/objgc/objgc/internal/jsonedit"
)

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
	retainedAt map[int]*[]int32          // new retainedKey arrays, by the object's offset
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

// fallback puts i in the retainedKey array of its nearest owner present in
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
		snap.ID(i), snap.ObjectPath(i), retainedKey)
}

// retainIn appends i to the retainedKey array of the object at off,
// adding the property when it is missing; false when the property is
// there but not an array.
func (pl *placer) retainIn(off int, i int32) bool {
	if list := pl.retainedAt[off]; list != nil {
		*list = append(*list, i)
		return true
	}
	m, ok := pl.findKey(off, retainedKey)
	if ok {
		if pl.at(m.VS) != '[' {
			return false
		}
		pl.r.At(m.VS).Adds = append(pl.r.At(m.VS).Adds, jsonedit.Addition{Value: pl.writer(i)})
		return true
	}
	list := &[]int32{i}
	pl.retainedAt[off] = list
	pl.r.At(off).Adds = append(pl.r.At(off).Adds, jsonedit.Addition{Key: []byte(`"` + retainedKey + `"`),
		Value: func(b jsonedit.Writer) error { return pl.writeList(b, *list) }})
	return true
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
