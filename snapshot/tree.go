package snapshot

import (
	"bytes"
	"cmp"
	"encoding/json"
	"hash/maphash"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/objgc/objgc/internal/jsonedit"
)

// Dependency is one onDestruction record of a publisher's header: the
// subscriber depends on the publisher (docs/design.md, "The object model";
// Murano's dependency-driven destruction spec). HasHandler is false for a null or
// missing handler: such a record orders destruction without notifying.
type Dependency struct {
	Subscriber string
	Handler    string
	HasHandler bool
}

// Object is one full copy of an object in a tree. Offsets are byte offsets
// into the tree's Document.Data. An Object holds no pointer, so that the
// garbage collector never reads a tree's objects (scanning a million of
// them would be a large part of a plan's time): its id and type are
// read through the tree (Tree.ID, Tree.TypeString, Tree.Type).
//
// An Object is 40 bytes (TestObjectSize): what few copies have is kept
// beside the objects, not in each (a model of a million tiny objects must
// plan in its memory bound). A copy's owner is derived from
// the copy enclosing it (Tree.Owner); its first copy is itself unless it
// is a later copy (Tree.First); its legacy type keys and onDestruction
// records are in Tree.exts; its header's offset is kept from Start.
type Object struct {
	id  strRef // the header's id, decoded: ids[off:off+n] of the tree ("" when none)
	typ strRef // the header's type as written (see Tree.TypeString)

	// int32, as every offset of the index: the reader refuses inputs of
	// MaxSize or more. 16 bytes less an object, a million times over.
	Start, End int32 // the object's JSON value: data[Start:End]

	encl int32 // the nearest enclosing copy, -1 at the top
	// The path from the document root is segPre segments, those of the
	// enclosing copy of that path's length (an anchor, see segsOf),
	// followed by its own from segs[segLo] (up to the next copy's, each
	// copy's recorded after the one before: Tree.segSpan). A copy's own
	// path is thus a few segments, not its depth: the full paths grow
	// with the square of the nesting.
	segLo int32
	// ext is 1 + the index in Tree.exts of the copy's legacy type keys
	// and onDestruction records, 0 for neither (most copies).
	ext int32
	// hdr is the "?" value's first byte less Start, or hdrFar when that
	// does not fit (Tree.HeaderStart).
	hdr uint16
	// bits holds segPre (MaxDepth fits in segPreMask) and the flags
	// bitHasID, bitDestroyed and bitLater.
	bits uint16
}

const (
	segPreMask   = 1<<10 - 1
	bitHasID     = 1 << 10 // the header has an id (Object.HasID)
	bitDestroyed = 1 << 11 // the header says "destroyed": true
	bitLater     = 1 << 12 // a later copy of an id: Tree.First is not the copy itself
	hdrFar       = 1<<16 - 1
)

// Object.bits holds segPre, which is at most MaxDepth.
const _ = uint(segPreMask - MaxDepth)

// HasID reports whether the copy's header has an id: false for an
// id-less object, never tracked nor destroyed.
func (o *Object) HasID() bool { return o.bits&bitHasID != 0 }

// Destroyed reports whether the copy's header says "destroyed": true.
func (o *Object) Destroyed() bool { return o.bits&bitDestroyed != 0 }

// IsFirst reports whether the copy is the first copy of its id in
// document order (the object itself), as every id-less object is:
// Tree.First(i) == i.
func (o *Object) IsFirst() bool { return o.bits&bitLater == 0 }

// segPre returns how many segments of the copy's path are its anchor's.
func (o *Object) segPre() int { return int(o.bits & segPreMask) }

// objExt is what few copies have, kept beside the objects (Object.ext).
type objExt struct {
	legacy int32   // 1 + index in Tree.legacies, 0 for none
	deps   depSpan // the onDestruction records; none when lo == hi
}

// First returns the index of the first copy of copy i's id in document
// order (the object itself): i itself for all but later copies, and for
// id-less objects; for a later copy, a binary search of the tree's d
// later copies (O(log d)).
func (t *Tree) First(i int32) int32 {
	if t.Objects[i].bits&bitLater == 0 {
		return i
	}
	k, _ := slices.BinarySearch(t.later, i)
	return t.laterFirst[k]
}

// Owner returns the index of copy i's owner, the first copy of the copy
// enclosing it, or -1 at the top of the tree.
func (t *Tree) Owner(i int32) int32 {
	e := t.Objects[i].encl
	if e < 0 {
		return -1
	}
	return t.First(e)
}

// HeaderStart returns the offset of the first byte of copy i's "?" value.
func (t *Tree) HeaderStart(i int32) int32 {
	o := &t.Objects[i]
	if o.hdr != hdrFar {
		return o.Start + int32(o.hdr)
	}
	return t.farHeaders[o.Start]
}

// strRef is a string of a header. An id is ids[off:off+n] of the index
// that read it. A type is the string ext[off] of that index when n < 0
// (the index keeps each distinct type once, up to maxTypes, and every
// type written with escapes, decoded), else the raw bytes data[off:off+n].
type strRef struct{ off, n int32 }

// legacyType holds a header's legacy classVersion and package keys.
type legacyType struct{ version, pkg string }

// ID returns the id of copy i ("" when it has none, HasID false). The
// string shares the tree's copy of its ids: reading it never reads the
// document, whose pages a mapped model releases (Document.release).
func (t *Tree) ID(i int32) string {
	r := t.Objects[i].id
	if r.n == 0 {
		return ""
	}
	return unsafe.String(&t.ids[r.off], r.n)
}

// TypeString returns the type of copy i's header as written ("" when it
// has none). A type the index's table does not hold (past maxTypes) is
// read from the document: for a mapped one, TypeString releases the pages
// read before (Document.maybeRelease), as Dependencies does, so that
// loops over objects far apart need not.
func (t *Tree) TypeString(i int32) string {
	r := t.Objects[i].typ
	if r.n < 0 {
		return t.ext[r.off]
	}
	if r.n > 0 {
		t.Doc.maybeRelease()
	}
	return t.Doc.view(int(r.off), int(r.off)+int(r.n))
}

// Type returns the parsed type of copy i: its TypeString (validated when
// the model was read), its version and package filled from the header's
// legacy classVersion and package keys when the string has none
// (docs/design.md, "The object model"). Name is empty when the header has
// no type.
func (t *Tree) Type(i int32) Type {
	var ty Type
	if r := t.Objects[i].typ; r.n < 0 {
		// A type of the table, parsed once: the plan asks for the type
		// of each doomed object several times.
		ty = t.extTypes[r.off]
	} else {
		ty, _ = ParseType(t.TypeString(i))
	}
	if l := t.legacy(i); l != 0 {
		t.Doc.maybeRelease() // the keys' strings are the document's
		lt := t.legacies[l-1]
		if ty.Version == "" {
			ty.Version = lt.version
		}
		if ty.Package == "" {
			ty.Package = lt.pkg
		}
	}
	return ty
}

// HasLegacyType reports whether copy i's header has legacy classVersion
// or package keys.
func (t *Tree) HasLegacyType(i int32) bool { return t.legacy(i) != 0 }

// legacy returns 1 + the index in t.legacies of copy i's legacy type
// keys, 0 for none.
func (t *Tree) legacy(i int32) int32 {
	if e := t.Objects[i].ext; e != 0 {
		return t.exts[e-1].legacy
	}
	return 0
}

// Duplicate is a later full copy of an object.
type Duplicate struct {
	First, Copy int32 // indexes in Tree.Objects
	Differs     bool  // the copies' contents differ (a warning, not an error)
}

// Tree is the index of one object tree (a snapshot or an incoming model)
// inside a document.
type Tree struct {
	Doc  *Document
	Path string // JSON path of the tree's root in Doc, "$" for a bare tree
	Null bool   // the tree is JSON null: no objects (Objects: null)

	Start, End int // the tree's JSON value: Doc.Data[Start:End]

	// Envelope is where the envelope holding the tree sits in Doc, as
	// the reader found it; nil for a bare tree.
	Envelope *Envelope

	// Objects holds every full copy in the order their closing braces
	// appear: owned objects before their owner. Sort by Start for document
	// order.
	Objects []Object

	// IDless lists the id-less objects in document order.
	IDless []int32
	// Duplicates lists later copies of ids in document order.
	Duplicates []Duplicate

	strs     []strVal
	segs     []int32
	keySegs  map[int32]string // rendered keys of segs, by offset (flatIndex.keySegs)
	ids      []byte           // every copy's id, decoded, one after the other (Object.id)
	ext      []string         // types kept by the reader (strRef with n < 0)
	extTypes []Type           // ext parsed, each once (Type)
	legacies []legacyType     // legacy type keys (objExt.legacy)
	deps     []Dependency     // onDestruction records, by objExt.deps
	exts     []objExt         // what few copies have (Object.ext)
	// later lists the later copies of ids in index order, laterFirst
	// their first copies (Tree.First).
	later, laterFirst []int32
	farHeaders        map[int32]int32 // HeaderStart by Start, of copies whose Object.hdr is hdrFar
	segEnd            int32           // the end of the last copy's segments (segSpan)
	byID              idIndex
	idLen             [256]bool // lengths of ids shorter than 256 bytes
	long              bool      // some id is 256 bytes or longer
}

// Lookup returns the index of the object with id (its first copy). It
// reads the index's copy of the ids, never the document.
func (t *Tree) Lookup(id string) (int32, bool) {
	return t.byID.get(t, id)
}

// LookupAll sets found[k] to the index of the object with id ids[k] (its
// first copy), or -1, as Lookup does for each; ids and found have the same
// length. Many lookups cost far less this way than one by one: the memory
// each waits for is fetched for several at once.
func (t *Tree) LookupAll(ids []string, found []int32) {
	t.byID.lookupAll(t, ids, found)
}

// IDSet indexes some objects of a tree by id (Tree.Subset).
type IDSet struct {
	t *Tree
	x idIndex
}

// Subset returns an index of the objects objs (first copies) of t by id.
// Looking many ids up among a tenth of a tree's objects waits for memory
// far less in an index of their own, which the processor's caches hold,
// than in the tree's, which they do not (the references to doomed objects
// among a million string values).
func (t *Tree) Subset(objs []int32) *IDSet {
	s := &IDSet{t: t, x: newIDIndex(len(objs))}
	for _, i := range objs {
		s.x.put(t, i)
	}
	return s
}

// LookupAll sets found[k] to the index of the object of the set with id
// ids[k], or -1, as Tree.LookupAll does.
func (s *IDSet) LookupAll(ids []string, found []int32) {
	s.x.lookupAll(s.t, ids, found)
}

// Len returns the number of distinct ids in the tree.
func (t *Tree) Len() int { return t.byID.n }

// MightBeID is a cheap filter: false means no object of t has an id of
// length n.
func (t *Tree) MightBeID(n int) bool {
	if n < len(t.idLen) {
		return t.idLen[n]
	}
	return t.long
}

// StringValue is a string value of a tree outside headers: a reference when
// it equals an object's id.
type StringValue struct {
	Offset int    // offset of the opening quote in Doc.Data
	Value  string // decoded value
}

// Strings calls yield for every string value of the tree outside headers,
// in document order, until yield returns false; values holding a lone
// surrogate escape, which equal no id, are left out (see StringsOfLength).
// Values share Doc.Data.
func (t *Tree) Strings(yield func(StringValue) bool) {
	t.StringsOfLength(func(int) bool { return true }, yield)
}

// StringsOfLength is Strings restricted to raw lengths accepted by keep, so
// that most values are never turned into strings. Escaped strings are
// passed on when keep accepts their decoded length, except those holding a
// lone surrogate escape: they have no exact decoded value and equal no id.
func (t *Tree) StringsOfLength(keep func(n int) bool, yield func(StringValue) bool) {
	t.StringsOfLengthPart(0, 1, keep, yield)
}

// StringsOfLengthPart is StringsOfLength of the part-th of parts equal
// shares of the tree's string values (in document order, part from 0):
// the parts together are all of them, so that they can be read on
// several goroutines. The pages of a mapped document read are released
// as it goes.
func (t *Tree) StringsOfLengthPart(part, parts int, keep func(n int) bool, yield func(StringValue) bool) {
	data := t.Doc.Data
	n := len(t.strs)
	for k, sv := range t.strs[n*part/parts : n*(part+1)/parts] {
		if k%releaseEvery == 0 {
			t.Doc.release()
		}
		off := int(sv.off)
		n := int(sv.n &^ strFlagEscaped)
		var v string
		if sv.n&strFlagEscaped != 0 {
			v = unescape(data[off : off+n+2])
			if !keep(len(v)) {
				continue
			}
			if strings.Contains(v, "\uFFFD") {
				// unescape reads a lone surrogate escape as U+FFFD; such
				// a string equals no id (ids holding one are refused),
				// not even one that holds U+FFFD itself.
				if _, lone := jsonedit.LoneSurrogate(data[off : off+n+2]); lone {
					continue
				}
			}
		} else {
			if !keep(n) {
				continue
			}
			v = t.Doc.view(off+1, off+1+n)
		}
		if !yield(StringValue{Offset: off, Value: v}) {
			return
		}
	}
}

// Dependencies returns the onDestruction records of copy i; for an object
// itself (First == i) the records of all its copies, each (subscriber,
// handler) once, in document order. The slice must not be modified. The
// records' strings are the document's: for a mapped one, Dependencies
// releases the pages read before (Document.maybeRelease), so that loops
// over objects far apart need not.
func (t *Tree) Dependencies(i int32) []Dependency {
	e := t.Objects[i].ext
	if e == 0 {
		return nil
	}
	sp := t.exts[e-1].deps
	if sp.lo == sp.hi {
		return nil
	}
	t.Doc.maybeRelease()
	return t.deps[sp.lo:sp.hi:sp.hi]
}

// depSpan is where a copy's onDestruction records are in Tree.deps.
type depSpan struct{ lo, hi int32 }

// segSpan returns where copy i's own path segments are in segs: from its
// segLo to the next copy's, which the reader recorded right after.
func (t *Tree) segSpan(i int32) (lo, hi int32) {
	if int(i)+1 < len(t.Objects) {
		return t.Objects[i].segLo, t.Objects[i+1].segLo
	}
	return t.Objects[i].segLo, t.segEnd
}

// Enclosing returns the index of the copy that syntactically encloses copy
// i (not resolved to a first copy), or -1 at the top of the tree.
func (t *Tree) Enclosing(i int32) int32 { return t.Objects[i].encl }

// ObjectAt returns the innermost copy whose span holds offset off, or -1.
func (t *Tree) ObjectAt(off int) int32 {
	// Objects are in closing order, so End is increasing.
	i := sort.Search(len(t.Objects), func(i int) bool { return int(t.Objects[i].End) > off })
	for j := int32(i); j >= 0 && int(j) < len(t.Objects); j = t.Objects[j].encl {
		if int(t.Objects[j].Start) <= off {
			return j
		}
	}
	return -1
}

// ObjectPath returns the JSON path of copy i, e.g.
// $.applications[2].instance.
//
// ObjectPath reads the keys of the copy's path from the index's table of
// keys (flatIndex.keySegs), not from the document; past maxKeys distinct
// keys it reads the others from the document, and for a mapped document
// releases the pages read as it goes (Document.release).
func (t *Tree) ObjectPath(i int32) string {
	if len(t.keySegs) >= maxKeys {
		t.Doc.maybeRelease()
	}
	var buf [32]int32
	segs := t.segsOf(i, buf[:0])
	return renderCut(t.Doc.Data, t.keySegs, nil, segs, len(segs))
}

// Depth returns how many JSON arrays and objects of its document enclose
// copy i: one for each segment of its ObjectPath. The copy itself opens
// one more level (see MaxDepth).
func (t *Tree) Depth(i int32) int {
	lo, hi := t.segSpan(i)
	return t.Objects[i].segPre() + int(hi-lo)
}

// segsOf returns the path segments of copy i from the document root,
// appended to buf[:0]: its own, after those of its anchor, found up the
// chain of enclosing copies (the only one whose path has that length:
// paths lengthen going down), and so on up to the root.
func (t *Tree) segsOf(i int32, buf []int32) []int32 {
	n := t.Depth(i)
	buf = slices.Grow(buf[:0], n)[:n]
	for {
		o := &t.Objects[i]
		lo, hi := t.segSpan(i)
		pre := o.segPre()
		copy(buf[pre:], t.segs[lo:hi])
		if pre == 0 {
			return buf
		}
		i = o.encl
		for i >= 0 && t.Depth(i) != pre {
			i = t.Objects[i].encl
		}
		if i < 0 {
			// Not reached: an anchor is a copy of the tree (mayAnchor).
			clear(buf[:pre])
			return buf
		}
	}
}

// PathAt returns the JSON path of the value that starts at offset off
// inside the tree. For many values use PathsAt: each call reads the
// enclosing copy again.
func (t *Tree) PathAt(off int) string {
	return t.PathsAt([]int{off})[0]
}

// PathsAt returns the JSON path of each value starting at offs[k] inside
// the tree (any order), e.g. $.applications[0].instance.ports[1]. The
// path of a copy is its ObjectPath; a value inside it adds the keys and
// indexes below the copy. The cost is one pass over the own bytes of the
// copies that hold the offsets (their nested copies are jumped over), plus
// O(log n) per offset and per plain object passed: linear in the tree's
// size however many offsets share a copy.
func (t *Tree) PathsAt(offs []int) []string {
	paths := make([]string, len(offs))
	if len(offs) == 0 {
		return paths
	}
	// Group the offsets by their innermost copy, each group ascending.
	type target struct {
		obj int32
		off int
		k   int
	}
	ts := make([]target, len(offs))
	for k, off := range offs {
		ts[k] = target{t.ObjectAt(off), off, k}
	}
	slices.SortFunc(ts, func(a, b target) int {
		if a.obj != b.obj {
			return cmp.Compare(a.obj, b.obj)
		}
		return cmp.Compare(a.off, b.off)
	})
	w := &pathWalker{t: t, data: t.Doc.Data}
	var group []int
	for lo := 0; lo < len(ts); {
		hi := lo
		group = group[:0]
		for ; hi < len(ts) && ts[hi].obj == ts[lo].obj; hi++ {
			group = append(group, ts[hi].off)
		}
		from, to := t.Start, t.End
		if obj := ts[lo].obj; obj >= 0 {
			from, to = int(t.Objects[obj].Start), int(t.Objects[obj].End)
			w.base, w.root = t.segsOf(obj, w.base), ""
		} else {
			w.base, w.root = nil, t.Path
		}
		done := ts[lo:hi]
		w.walk(from, to, group, func(k int, path string) { paths[done[k].k] = path })
		lo = hi
	}
	return paths
}

// finish builds the id index, resolves first copies and owners, merges the
// dependencies of copies and finds id-less objects.
func (t *Tree) finish(lo int, deps []Dependency, exts []objExt) {
	// Full slice expressions: trees of one document share the scanner's
	// records, and each appends its merged ones to a copy of its own.
	t.deps = deps[:len(deps):len(deps)]
	t.exts = exts[:len(exts):len(exts)]
	dups := t.firstCopies(t.indexIDs(lo))
	sortByStart(t.Objects, t.IDless)
	sortByStart(t.Objects, dups)
	t.noteDuplicates(dups)
	t.mergeCopiesRecords(dups)
}

// indexIDs makes the tree's id index (byID) and its lists of id-less
// objects and id lengths, and rebases each copy's enclosing copy from the
// document's objects (the tree's start at lo) to the tree's. It returns
// the ids held by more than one copy, or nil.
func (t *Tree) indexIDs(lo int) (dupIDs map[string]bool) {
	objs := t.Objects
	n := int32(len(objs))
	t.byID = newIDIndex(len(objs))
	// The ids are hashed a batch at a time and the slots where their
	// probes start loaded ahead (see batch).
	var hs [batch]uint64
	var sink uint64
	for i := range objs {
		if i%batch == 0 {
			end := min(i+batch, len(objs))
			for k := i; k < end; k++ {
				hs[k-i] = maphash.String(idSeed, t.ID(int32(k)))
			}
			sink += t.byID.touchAll(hs[:end-i])
		}
		if i%releaseEvery == 0 {
			t.Doc.release()
		}
		o := &objs[i]
		if o.encl >= 0 {
			o.encl -= int32(lo)
			if o.encl < 0 || o.encl >= n {
				o.encl = -1
			}
		}
		if !o.HasID() {
			t.IDless = append(t.IDless, int32(i))
			continue
		}
		if l := len(t.ID(int32(i))); l < len(t.idLen) {
			t.idLen[l] = true
		} else {
			t.long = true
		}
		// One probe per id: put reports an id the index already had.
		if _, had := t.byID.putHashed(t, int32(i), hs[i%batch]); had {
			if dupIDs == nil {
				dupIDs = map[string]bool{}
			}
			dupIDs[t.ID(int32(i))] = true
		}
	}
	loads.Add(sink)
	return dupIDs
}

// firstCopies makes the copy first in document order of each id of
// dupIDs the one the index holds, records the later copies (later,
// laterFirst, bitLater) and returns them, in index order.
func (t *Tree) firstCopies(dupIDs map[string]bool) []int32 {
	objs := t.Objects
	var dups []int32
	if dupIDs != nil {
		// The first copy in document order is the object: the copy with
		// the smallest Start (closing order differs for a copy nested in
		// a copy of the same id).
		for i := range objs {
			o := &objs[i]
			if !o.HasID() || !dupIDs[t.ID(int32(i))] {
				continue
			}
			dups = append(dups, int32(i))
			if f, _ := t.byID.get(t, t.ID(int32(i))); objs[f].Start > o.Start {
				t.byID.put(t, int32(i))
			}
		}
		kept := dups[:0]
		for _, i := range dups {
			if f, _ := t.byID.get(t, t.ID(i)); f != i {
				kept = append(kept, i)
			}
		}
		dups = kept
	}
	// dups is in index order, as First searches it.
	t.later, t.laterFirst = slices.Clip(dups), make([]int32, len(dups))
	for k, i := range dups {
		t.laterFirst[k], _ = t.byID.get(t, t.ID(i))
		objs[i].bits |= bitLater
	}
	return slices.Clone(dups)
}

// noteDuplicates lists the later copies dups (in document order) in
// Duplicates, each compared with its first copy.
func (t *Tree) noteDuplicates(dups []int32) {
	// Each first copy compared with its later copies is decoded once
	// (60,000 copies of one object must not decode it 60,000 times).
	decoded := map[int32]any{}
	for _, c := range dups {
		f := t.First(c)
		d := Duplicate{First: f, Copy: c}
		d.Differs = !t.sameAsFirst(decoded, f, c)
		t.Duplicates = append(t.Duplicates, d)
	}
}

// mergeCopiesRecords merges the onDestruction records of each object with
// later copies dups, and drops the repeats of any other object's.
func (t *Tree) mergeCopiesRecords(dups []int32) {
	objs := t.Objects
	// The records of an object with copies: its own and then each later
	// copy's in document order, merged once per object (merging copy by
	// copy grew the arena by the whole list for each copy: quadratic).
	copies := slices.Clone(dups)
	slices.SortStableFunc(copies, func(a, b int32) int { return cmp.Compare(t.First(a), t.First(b)) })
	for lo := 0; lo < len(copies); {
		f := t.First(copies[lo])
		lists := [][]Dependency{t.Dependencies(f)}
		hi := lo
		for ; hi < len(copies) && t.First(copies[hi]) == f; hi++ {
			lists = append(lists, t.Dependencies(copies[hi]))
		}
		t.setDependencies(f, mergeDependencies(nil, lists...))
		lo = hi
	}
	for i := range objs {
		if objs[i].bits&bitLater == 0 && len(t.Dependencies(int32(i))) > 1 && hasRepeats(t.Dependencies(int32(i))) {
			t.setDependencies(int32(i), mergeDependencies(nil, t.Dependencies(int32(i))))
		}
	}
}

// sameAsFirst reports whether copy c holds the same JSON value as first
// copy f, ignoring white space and key order, decoding f at most once through decoded.
func (t *Tree) sameAsFirst(decoded map[int32]any, f, c int32) bool {
	a := t.Doc.Data[t.Objects[f].Start:t.Objects[f].End]
	b := t.Doc.Data[t.Objects[c].Start:t.Objects[c].End]
	if bytes.Equal(a, b) {
		return true
	}
	va, ok := decoded[f]
	if !ok {
		if json.Unmarshal(a, &va) != nil {
			va = nil
		}
		decoded[f] = va
	}
	var vb any
	if va == nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

func sortByStart(objs []Object, idx []int32) {
	sort.Slice(idx, func(a, b int) bool { return objs[idx[a]].Start < objs[idx[b]].Start })
}

// setDependencies makes d the records of object i (appended to the
// arena: the scanner's records stay as they are for other trees, and an
// entry of exts is only ever one copy's).
func (t *Tree) setDependencies(i int32, d []Dependency) {
	lo := len(t.deps)
	t.deps = append(t.deps, d...)
	sp := depSpan{int32(lo), int32(len(t.deps))}
	if o := &t.Objects[i]; o.ext == 0 {
		t.exts = append(t.exts, objExt{deps: sp})
		o.ext = int32(len(t.exts))
	} else {
		t.exts[o.ext-1].deps = sp
	}
}

// hasRepeats reports whether a record appears twice in d.
func hasRepeats(d []Dependency) bool {
	if len(d) > smallDeps {
		seen := make(map[Dependency]struct{}, len(d))
		for _, x := range d {
			if _, ok := seen[x]; ok {
				return true
			}
			seen[x] = struct{}{}
		}
		return false
	}
	for i := range d {
		for j := i + 1; j < len(d); j++ {
			if d[i] == d[j] {
				return true
			}
		}
	}
	return false
}

// smallDeps is the length up to which record lists are compared pairwise;
// longer ones (a header may hold 60,000 records) go through a set.
const smallDeps = 16

// mergeDependencies appends to dst the records of each list that dst
// lacks, in order: a subscriber that subscribes several times with one
// handler is notified once (Murano's spec: "A may establish more than 1
// destruction dependency on B and still be notified just once"). The cost
// is linear in the records.
func mergeDependencies(dst []Dependency, lists ...[]Dependency) []Dependency {
	n := len(dst)
	for _, l := range lists {
		n += len(l)
	}
	if n <= smallDeps {
		for _, l := range lists {
		next:
			for _, d := range l {
				for _, e := range dst {
					if e == d {
						continue next
					}
				}
				dst = append(dst, d)
			}
		}
		return dst
	}
	seen := make(map[Dependency]struct{}, n)
	for _, e := range dst {
		seen[e] = struct{}{}
	}
	for _, l := range lists {
		for _, d := range l {
			if _, ok := seen[d]; !ok {
				seen[d] = struct{}{}
				dst = append(dst, d)
			}
		}
	}
	return dst
}
