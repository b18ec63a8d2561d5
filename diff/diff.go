// Package diff compares the snapshot of the previous deployment of a Murano
// object model with the incoming model: the objects removed offline
// (doomed), the references left dangling to them, the destroyed objects
// nothing live holds any more, and ids whose type changed (docs/design.md,
// "What is destroyed").
package diff

import (
	"context"
	"sort"
	"sync"

	"github.com/objgc/objgc/snapshot"
)

// Dangling is a reference in the incoming model to a doomed object.
type Dangling struct {
	Referrer   int32  // index in Incoming.Objects of the referring copy, -1 at the top
	ReferrerID string // "" when the referrer has no id or there is none
	Path       string // JSON path of the reference in the incoming document
	Offset     int    // byte offset of the reference's opening quote
	Doomed     int32  // index in Snapshot.Objects of the doomed object
	DoomedID   string
}

// TypeChange is an id present in both trees with different types: the same
// object, not destroyed; the plan warns.
type TypeChange struct {
	ID                   string
	Snapshot, Incoming   int32 // indexes in the trees' Objects
	Old, New             snapshot.Type
	OldString, NewString string
}

// Result is the comparison of a snapshot with an incoming model.
type Result struct {
	Snapshot, Incoming *snapshot.Tree

	// Doomed lists, in snapshot document order, the objects (first copies)
	// whose id is in the snapshot, nowhere in the incoming model, and that
	// are not already marked destroyed.
	Doomed []int32
	// Dangling lists the references of the incoming model to doomed ids,
	// in document order.
	Dangling []Dangling
	// Dropped lists incoming objects (first copies) marked destroyed that
	// nothing live holds any more: they leave the output without hooks.
	Dropped []int32
	// TypeChanges lists ids whose type changed, in snapshot document order.
	TypeChanges []TypeChange

	doomed []bool // by snapshot object index
}

// IsDoomed reports whether snapshot object i (a first copy) is doomed.
func (r *Result) IsDoomed(i int32) bool { return i >= 0 && int(i) < len(r.doomed) && r.doomed[i] }

// Compare computes the Result of snap against incoming. Neither tree is
// modified. The error is a *snapshot.ChangedError when a mapped model's
// file was truncated under the comparison.
func Compare(snap, incoming *snapshot.Tree) (*Result, error) {
	return CompareContext(context.Background(), snap, incoming)
}

// checkEvery is how many objects or strings the loops handle between two
// looks at the context: often enough to stop within milliseconds, rarely
// enough to cost nothing.
const checkEvery = 1 << 12

// lookupChunk is how many snapshot objects the comparison looks up in the
// incoming index at once (Tree.LookupAll).
const lookupChunk = 256

// part is what one of the comparison's goroutines found.
type part struct {
	doomed  []int32
	changes []TypeChange
}

// compare records what snapshot object i, with id, is: doomed when the
// incoming model lacks it (j < 0) and it was not destroyed before, a type
// change when the incoming object j has another type.
func (pt *part) compare(r *Result, i int32, id string, j int32) {
	snap, incoming := r.Snapshot, r.Incoming
	if j < 0 {
		if !snap.Objects[i].Destroyed() {
			r.doomed[i] = true
			pt.doomed = append(pt.doomed, i)
		}
		return
	}
	oldType, newType := snap.TypeString(i), incoming.TypeString(j)
	if newType == oldType && !snap.HasLegacyType(i) && !incoming.HasLegacyType(j) {
		return // the common case, without parsing
	}
	if ot, nt := snap.Type(i), incoming.Type(j); typeChanged(ot, nt) {
		pt.changes = append(pt.changes, TypeChange{ID: id, Snapshot: i, Incoming: j,
			Old: ot, New: nt, OldString: oldType, NewString: newType})
	}
}

// CompareContext is Compare that gives up when ctx is done, within a few
// thousand objects, and returns ctx.Err() and no Result (a SIGINT during
// a plan of a large model stops it promptly).
//
// The comparison reads the trees on several goroutines, each under
// snapshot.Protect as the caller's is: a fault reading a mapped model is
// its *snapshot.ChangedError, not a crash.
func CompareContext(ctx context.Context, snap, incoming *snapshot.Tree) (_ *Result, err error) {
	r := &Result{Snapshot: snap, Incoming: incoming, doomed: make([]bool, len(snap.Objects))}
	defer snapshot.Protect(&err, r.docs)()
	// Two halves in parallel: a million lookups in the incoming index
	// are the bulk of the work. Tree.LookupAll and Tree.Type only read the
	// trees (the id index is a slice probed in place, nothing is cached),
	// so the halves share them; each writes only its own part and its own
	// indexes of r.doomed.
	var parts [2]part
	total := len(snap.Objects)
	err = r.each(len(parts), func(k int) {
		pt, lo, hi := &parts[k], k*total/2, (k+1)*total/2
		// The ids of a chunk of objects are looked up together
		// (Tree.LookupAll: the incoming index is larger than the caches,
		// and one lookup at a time waits for memory each).
		idxs := make([]int32, 0, lookupChunk)
		ids := make([]string, 0, lookupChunk)
		found := make([]int32, lookupChunk)
		for from := lo; from < hi; from += lookupChunk {
			if from%checkEvery < lookupChunk && ctx.Err() != nil {
				return
			}
			idxs, ids = idxs[:0], ids[:0]
			for i := from; i < min(from+lookupChunk, hi); i++ {
				if o := &snap.Objects[i]; o.HasID() && o.IsFirst() {
					idxs = append(idxs, int32(i))
					ids = append(ids, snap.ID(int32(i)))
				}
			}
			incoming.LookupAll(ids, found[:len(ids)])
			for n, i := range idxs {
				pt.compare(r, i, ids[n], found[n])
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	r.Doomed = append(parts[0].doomed, parts[1].doomed...)
	r.TypeChanges = append(parts[0].changes, parts[1].changes...)
	byStart := func(objs []snapshot.Object, idx []int32) {
		sort.Slice(idx, func(a, b int) bool { return objs[idx[a]].Start < objs[idx[b]].Start })
	}
	byStart(snap.Objects, r.Doomed)
	sort.Slice(r.TypeChanges, func(a, b int) bool {
		return snap.Objects[r.TypeChanges[a].Snapshot].Start < snap.Objects[r.TypeChanges[b].Snapshot].Start
	})
	if len(r.Doomed) > 0 {
		if err := r.findDangling(ctx); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.findDropped(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r, nil
}

// docs returns the documents of the trees compared.
func (r *Result) docs() []*snapshot.Document {
	return []*snapshot.Document{r.Snapshot.Doc, r.Incoming.Doc}
}

// each runs f(0) to f(n-1), each on a goroutine of its own, and waits for
// them: the work of a loop over the trees split between the processors. A
// fault reading a mapped model stops the goroutine that met it: the first
// in that order is returned.
func (r *Result) each(n int, f func(k int)) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() {
			defer snapshot.Protect(&errs[k], r.docs)()
			f(k)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// typeChanged compares class names, and versions and packages where both
// sides name them: a type string that gained its /version@package on an
// engine upgrade is not a change.
func typeChanged(a, b snapshot.Type) bool {
	if a.Name != b.Name {
		return true
	}
	if a.Version != "" && b.Version != "" && a.Version != b.Version {
		return true
	}
	return a.Package != "" && b.Package != "" && a.Package != b.Package
}

func (r *Result) findDangling(ctx context.Context) error {
	if len(r.Doomed) == 0 {
		return nil
	}
	doomed := r.Snapshot.Subset(r.Doomed)
	// The incoming model's string values in two halves on two goroutines,
	// each half's references in document order.
	var halves [2][]Dangling
	err := r.each(len(halves), func(k int) {
		halves[k] = r.danglingIn(ctx, doomed, k, len(halves))
	})
	if err != nil {
		return err // a fault reading a mapped model
	}
	if ctx.Err() != nil {
		return nil
	}
	r.Dangling = append(halves[0], halves[1]...)
	// One pass names every path: a copy holding 60,000 references is read
	// once, not once for each.
	offs := make([]int, len(r.Dangling))
	for k := range r.Dangling {
		offs[k] = r.Dangling[k].Offset
	}
	for k, p := range r.Incoming.PathsAt(offs) {
		r.Dangling[k].Path = p
	}
	return nil
}

// danglingIn returns the references to doomed objects among the string
// values of part of parts of the incoming model (Tree.StringsOfLengthPart),
// looked up a chunk at a time among the doomed objects alone (IDSet).
func (r *Result) danglingIn(ctx context.Context, doomed *snapshot.IDSet, part, parts int) []Dangling {
	in := r.Incoming
	var out []Dangling
	vals := make([]snapshot.StringValue, 0, lookupChunk)
	ids := make([]string, 0, lookupChunk)
	found := make([]int32, lookupChunk)
	lookup := func() {
		doomed.LookupAll(ids, found[:len(ids)])
		for k, j := range found[:len(ids)] {
			if j < 0 {
				continue
			}
			sv := vals[k]
			// The doomed object's id is the index's copy, not the
			// value's bytes: it outlives the document's mapping.
			d := Dangling{Referrer: in.ObjectAt(sv.Offset), Offset: sv.Offset, Doomed: j, DoomedID: r.Snapshot.ID(j)}
			if d.Referrer >= 0 {
				d.ReferrerID = in.ID(in.First(d.Referrer))
			}
			out = append(out, d)
		}
		vals, ids = vals[:0], ids[:0]
	}
	n := 0
	in.StringsOfLengthPart(part, parts, r.Snapshot.MightBeID, func(sv snapshot.StringValue) bool {
		if n++; n%checkEvery == 0 && ctx.Err() != nil {
			return false
		}
		vals, ids = append(vals, sv), append(ids, sv.Value)
		if len(ids) == lookupChunk {
			lookup()
		}
		return true
	})
	lookup()
	return out
}

// findDropped finds the destroyed objects of the incoming model that no
// live object holds. An object holds another by nesting a copy of it
// (Murano writes a destroyed object in full at its first reference) or by a
// bare reference; a destroyed object held by a kept one is kept; one whose
// copy holds a live object is kept so that nothing live is lost.
func (r *Result) findDropped(ctx context.Context) {
	in := r.Incoming
	objs := in.Objects
	var destroyed []int32
	for i := range objs {
		if o := &objs[i]; o.IsFirst() && o.Destroyed() {
			destroyed = append(destroyed, int32(i))
		}
	}
	if len(destroyed) == 0 {
		return
	}
	d := &dropScan{in: in, holders: map[int32][]int32{}, kept: map[int32]bool{}}
	d.byNesting()
	d.byReference(ctx)
	d.propagate()
	for _, x := range destroyed {
		if !d.kept[x] {
			r.Dropped = append(r.Dropped, x)
		}
	}
	sort.Slice(r.Dropped, func(a, b int) bool { return objs[r.Dropped[a]].Start < objs[r.Dropped[b]].Start })
}

// dropScan is findDropped's state: which destroyed objects are kept, and
// which hold one another.
type dropScan struct {
	in *snapshot.Tree
	// holders[d] are the first copies of destroyed objects holding
	// destroyed object d.
	holders map[int32][]int32
	kept    map[int32]bool
	queue   []int32 // kept objects whose holdings are not yet kept
}

// isDestroyed reports whether copy i's object is marked destroyed.
func (d *dropScan) isDestroyed(i int32) bool { return d.in.Objects[d.in.First(i)].Destroyed() }

func (d *dropScan) keep(x int32) {
	if !d.kept[x] {
		d.kept[x] = true
		d.queue = append(d.queue, x)
	}
}

// hold notes that copy h (-1: none) holds destroyed object x: a live
// holder keeps it, a destroyed one may still be kept (propagate).
func (d *dropScan) hold(x, h int32) {
	switch {
	case h < 0:
	case !d.isDestroyed(h):
		d.keep(x)
	default:
		d.holders[x] = append(d.holders[x], d.in.First(h))
	}
}

// byNesting notes the holdings by nesting: each copy of a destroyed
// object is held by its enclosing copy; and a destroyed copy holding a
// live object keeps its object, so that nothing live is lost.
func (d *dropScan) byNesting() {
	in, objs := d.in, d.in.Objects
	for i := range objs {
		if f := in.First(int32(i)); objs[f].Destroyed() {
			d.hold(f, in.Enclosing(int32(i)))
		}
	}
	// Copies are in closing order (what a copy encloses comes before it),
	// so one pass carries "holds a live object" up to every enclosing
	// copy; walking each object's chain of enclosing copies was
	// quadratic in the nesting depth.
	liveInside := make([]bool, len(objs))
	for i := range objs {
		if d.isDestroyed(int32(i)) && liveInside[i] {
			d.keep(in.First(int32(i)))
		}
		if h := in.Enclosing(int32(i)); h >= 0 && (liveInside[i] || !d.isDestroyed(int32(i))) {
			liveInside[h] = true
		}
	}
}

// byReference notes the holdings by bare reference: a string value equal
// to a destroyed object's id is held by the copy it is in. It gives up
// when ctx is done.
func (d *dropScan) byReference(ctx context.Context) {
	in := d.in
	n := 0
	in.StringsOfLength(in.MightBeID, func(sv snapshot.StringValue) bool {
		if n++; n%checkEvery == 0 && ctx.Err() != nil {
			return false
		}
		if t, ok := in.Lookup(sv.Value); ok && in.Objects[t].Destroyed() {
			d.hold(t, in.ObjectAt(sv.Offset))
		}
		return true
	})
}

// propagate keeps every destroyed object held by a kept one.
func (d *dropScan) propagate() {
	held := map[int32][]int32{} // holder -> destroyed objects it holds
	for x, hs := range d.holders {
		for _, h := range hs {
			held[h] = append(held[h], x)
		}
	}
	for len(d.queue) > 0 {
		x := d.queue[0]
		d.queue = d.queue[1:]
		for _, y := range held[x] {
			d.keep(y)
		}
	}
}
