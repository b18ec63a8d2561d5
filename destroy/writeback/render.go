package writeback

import (
	"bytes"
	"sort"

	"github.com/objgc/objgc/internal/jsonedit"
	"github.com/objgc/objgc/snapshot"
)

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
