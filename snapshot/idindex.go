package snapshot

import (
	"hash/maphash"
	"math/bits"
	"sync/atomic"
)

// idSeed is the hash seed of every id index in the process.
var idSeed = maphash.MakeSeed()

// idIndex maps an object id to the index of its object in a Tree's
// Objects: an open-addressing table with linear probing, kept at most half
// full. Each slot packs the upper 32 bits of the id's hash (the tag) with
// the object index plus one; the zero slot is empty, so a new table is
// fresh zeroed memory and a probe compares the strings only when the tags
// match. It holds 8 bytes a slot against the 24 of a map[string]int32,
// which is what a million-object model spends its time and memory on
// (docs/performance.md).
type idIndex struct {
	slots []uint64
	mask  uint64
	n     int
}

// loads receives a sum of the values the batched operations load ahead of
// use, so that the compiler keeps those loads.
var loads atomic.Uint64

func newIDIndex(hint int) idIndex {
	size := 16
	if hint > 4 {
		size = 1 << bits.Len(uint(2*hint-1))
	}
	x := idIndex{slots: make([]uint64, size), mask: uint64(size - 1)}
	adviseHuge(x.slots)
	// Write the fresh table once, front to back, before probing it: a
	// probe reads a slot before it writes one, and a read of untouched
	// memory maps the shared zero page, which the write then replaces,
	// flushing the other cores' TLBs (an interrupt each, for every page
	// of the table).
	clear(x.slots)
	return x
}

// find returns the slot of id, whose hash is h, or the empty slot where
// it would go.
func (x *idIndex) find(t *Tree, id string, h uint64) (pos uint64, found bool) {
	tag := h >> 32
	for pos = h & x.mask; ; pos = (pos + 1) & x.mask {
		e := x.slots[pos]
		if e == 0 {
			return pos, false
		}
		if e>>32 == tag && t.ID(int32(uint32(e)-1)) == id {
			return pos, true
		}
	}
}

// batch is how many ids the batched operations (getAll, Tree.finish) hash
// and look up at once. A table of a million ids is larger than the
// processor's caches, so each lookup waits for memory; loading the first
// slot of a batch of ids one after the other, before anything depends on
// them, lets the processor wait for all of them at once.
const batch = 16

// touchAll loads the slots where the probes for hashes hs start, in a
// tight loop: the processor has them all under way at once (in a loop
// that also hashes it would run out of room after a few), and the probes
// find the slots in the cache. It returns a sum of what it loaded (loads).
func (x *idIndex) touchAll(hs []uint64) (sink uint64) {
	for _, h := range hs {
		sink += x.slots[h&x.mask]
	}
	return sink
}

// getAll sets found[k] to the index stored for ids[k], or -1; at most
// batch ids. It returns a sum of what it loaded ahead (loads).
func (x *idIndex) getAll(t *Tree, ids []string, found []int32) (sink uint64) {
	if x.slots == nil {
		for k := range ids {
			found[k] = -1
		}
		return 0
	}
	var hs [batch]uint64
	for k, id := range ids {
		hs[k] = maphash.String(idSeed, id)
	}
	sink = x.touchAll(hs[:len(ids)])
	// The objects the tags point at, likewise loaded before they are
	// compared.
	var cand [batch]int32
	for k := range ids {
		cand[k] = -1
		tag := hs[k] >> 32
		if e := x.slots[hs[k]&x.mask]; e != 0 && e>>32 == tag {
			cand[k] = int32(uint32(e) - 1)
			sink += uint64(t.Objects[cand[k]].id.off)
		}
	}
	for k, id := range ids {
		if c := cand[k]; c >= 0 && t.ID(c) == id {
			found[k] = c
			continue
		}
		pos, ok := x.find(t, id, hs[k])
		found[k] = -1
		if ok {
			found[k] = int32(uint32(x.slots[pos]) - 1)
		}
	}
	return sink
}

// lookupAll is getAll for any number of ids, a batch at a time (see
// Tree.LookupAll).
func (x *idIndex) lookupAll(t *Tree, ids []string, found []int32) {
	var sink uint64
	for lo := 0; lo < len(ids); lo += batch {
		hi := min(lo+batch, len(ids))
		sink += x.getAll(t, ids[lo:hi], found[lo:hi])
	}
	loads.Add(sink)
}

// get returns the index stored for id.
func (x *idIndex) get(t *Tree, id string) (int32, bool) {
	if x.slots == nil {
		return 0, false
	}
	pos, ok := x.find(t, id, maphash.String(idSeed, id))
	if !ok {
		return 0, false
	}
	return int32(uint32(x.slots[pos]) - 1), true
}

// put stores i, the index of an object of t, for its id and returns the
// index the id had before, if any.
func (x *idIndex) put(t *Tree, i int32) (prev int32, had bool) {
	return x.putHashed(t, i, maphash.String(idSeed, t.ID(i)))
}

// putHashed is put for an id whose hash is h.
func (x *idIndex) putHashed(t *Tree, i int32, h uint64) (prev int32, had bool) {
	id := t.ID(i)
	pos, ok := x.find(t, id, h)
	if ok {
		prev, had = int32(uint32(x.slots[pos])-1), true
	} else {
		x.n++
		if 2*x.n > len(x.slots) {
			x.grow(t)
			pos, _ = x.find(t, id, h)
		}
	}
	x.slots[pos] = h>>32<<32 | uint64(uint32(i)+1)
	return prev, had
}

// grow doubles the table.
func (x *idIndex) grow(t *Tree) {
	old := x.slots
	x.slots = make([]uint64, 2*len(old))
	x.mask = uint64(len(x.slots) - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		pos := maphash.String(idSeed, t.ID(int32(uint32(e)-1))) & x.mask
		for x.slots[pos] != 0 {
			pos = (pos + 1) & x.mask
		}
		x.slots[pos] = e
	}
}
