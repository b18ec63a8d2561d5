package snapshot

import (
	"hash/maphash"
	"math/bits"
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

func newIDIndex(hint int) idIndex {
	size := 16
	if hint > 4 {
		size = 1 << bits.Len(uint(2*hint-1))
	}
	x := idIndex{slots: make([]uint64, size), mask: uint64(size - 1)}
	adviseHuge(x.slots)
	return x
}

// find returns the slot of id, whose hash is h, or the empty slot where
// it would go.
func (x *idIndex) find(objs []Object, id string, h uint64) (pos uint64, found bool) {
	tag := h >> 32
	for pos = h & x.mask; ; pos = (pos + 1) & x.mask {
		e := x.slots[pos]
		if e == 0 {
			return pos, false
		}
		if e>>32 == tag && objs[uint32(e)-1].ID == id {
			return pos, true
		}
	}
}

// get returns the index stored for id.
func (x *idIndex) get(objs []Object, id string) (int32, bool) {
	if x.slots == nil {
		return 0, false
	}
	pos, ok := x.find(objs, id, maphash.String(idSeed, id))
	if !ok {
		return 0, false
	}
	return int32(uint32(x.slots[pos]) - 1), true
}

// put stores i, the index of an object of objs, for objs[i].ID and returns
// the index the id had before, if any.
func (x *idIndex) put(objs []Object, i int32) (prev int32, had bool) {
	id := objs[i].ID
	h := maphash.String(idSeed, id)
	pos, ok := x.find(objs, id, h)
	if ok {
		prev, had = int32(uint32(x.slots[pos])-1), true
	} else {
		x.n++
		if 2*x.n > len(x.slots) {
			x.grow(objs)
			pos, _ = x.find(objs, id, h)
		}
	}
	x.slots[pos] = h>>32<<32 | uint64(uint32(i)+1)
	return prev, had
}

// grow doubles the table.
func (x *idIndex) grow(objs []Object) {
	old := x.slots
	x.slots = make([]uint64, 2*len(old))
	x.mask = uint64(len(x.slots) - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		pos := maphash.String(idSeed, objs[uint32(e)-1].ID) & x.mask
		for x.slots[pos] != 0 {
			pos = (pos + 1) & x.mask
		}
		x.slots[pos] = e
	}
}
