package snapshot

import (
	"bytes"

	"github.com/objgc/objgc/internal/jsonedit"
)

// alloc sizes the index for data: every object of the model has a header, so
// the count of '?' bytes is at least the count of objects (unless a header's
// key is written escaped) and rarely much more (a '?' in a string value);
// counting costs a pass at memory speed (40 ms for 370 MB). The objects
// array is the largest: growing it would hold the old and the new array at
// once, at the plan's peak. Real and generated models hold a string value
// per 80 to 250 bytes and a path segment per 30 to 250. A low estimate costs
// one copy (sized from the density seen so far, see grow) and a high one
// memory never touched, which the garbage collector counts as live all the
// same. String values and records, which a model may hold none of (a model
// of tiny objects has few), start at a tenth of the densest and grow from
// the density seen: the copy is of the part read.
func (x *flatIndex) alloc(data []byte, mapped bool) {
	objects, idLen := estimateObjects(data, mapped)
	x.objects = make([]Object, 0, objects+16)
	x.strs = make([]strVal, 0, len(data)/1024+16)
	// Two segments an object (Object.segPre): a key and an index.
	x.segs = make([]int32, 0, 2*cap(x.objects)+16)
	x.deps = make([]Dependency, 0, len(data)/16384+16)
	// Room reserved and never written costs no memory, but the garbage
	// collector counts it as live and lets the heap grow by that much
	// more: room for ids far longer than the model's is garbage the
	// collector waits for.
	x.ids = make([]byte, 0, (idLen+1)*cap(x.objects))
}

// reserve makes room in the index for data still to be read, sized as
// alloc sizes it, keeping what the index holds.
func (x *flatIndex) reserve(data []byte, mapped bool) {
	var more flatIndex
	more.alloc(data, mapped)
	x.objects = append(more.objects, x.objects...)
	x.strs = append(more.strs, x.strs...)
	x.segs = append(more.segs, x.segs...)
	x.deps = append(more.deps, x.deps...)
	x.exts = append(more.exts, x.exts...)
	x.ids = append(more.ids, x.ids...)
}

// passChunk is the size of the pieces in which a fast pass over a mapped
// document (countByte, the hash) reads it, releasing each one behind it:
// such a pass reads gigabytes a second, far faster than the trimming
// goroutine releases pages (mapping, trimInterval).
const passChunk = 4 << 20

// estimateObjects returns the count of '?' bytes in data, exactly for
// data up to 16 MiB, else extrapolated from four windows of 1 MiB spread
// over it, plus an eighth: counting all of a mapped tree faulted its pages
// in once more before its scan did (a pass on the critical path of each
// of the two scans of a large envelope). A low estimate costs a copy
// (grow, from the density seen so far). It also returns the mean length of
// the ids written in the same bytes (the string after each "id" key), 32
// when they show none.
func estimateObjects(data []byte, mapped bool) (objects, idLen int) {
	const window = 1 << 20
	var c sampleCount
	if len(data) <= 16*window {
		c.add(data, mapped)
		return c.marks, c.idLen()
	}
	for k := range 4 {
		lo := (len(data) - window) * k / 3
		c.add(data[lo:lo+window], mapped)
	}
	est := int64(c.marks) * int64(len(data)) / (4 * window)
	return int(est + est/8), c.idLen()
}

// sampleCount counts, in the samples estimateObjects reads, the '?'
// bytes and the ids written.
type sampleCount struct {
	marks         int
	ids, idsBytes int
}

// add counts data, releasing the pages read behind it when it is mapped.
func (c *sampleCount) add(data []byte, mapped bool) {
	eachChunk(data, mapped, func(chunk []byte) {
		c.marks += bytes.Count(chunk, []byte{'?'})
		for i := 0; ; {
			k := bytes.Index(chunk[i:], []byte(`"id"`))
			if k < 0 {
				return
			}
			i += k + len(`"id"`)
			j := jsonedit.WS(chunk, i)
			if j >= len(chunk) || chunk[j] != ':' {
				continue
			}
			if j = jsonedit.WS(chunk, j+1); j >= len(chunk) || chunk[j] != '"' {
				continue
			}
			n := bytes.IndexByte(chunk[j+1:], '"')
			if n < 0 {
				return
			}
			c.ids, c.idsBytes = c.ids+1, c.idsBytes+n
		}
	})
}

// idLen returns the mean length of the ids counted, rounded up; 32 (a
// Murano id's hex digits) for none.
func (c *sampleCount) idLen() int {
	if c.ids == 0 {
		return 32
	}
	return (c.idsBytes + c.ids - 1) / c.ids
}

// eachChunk calls fn with data passChunk bytes at a time, releasing each
// piece once fn is done with it when data is mapped.
func eachChunk(data []byte, mapped bool, fn func(chunk []byte)) {
	for lo := 0; lo < len(data); lo += passChunk {
		chunk := data[lo:min(lo+passChunk, len(data))]
		fn(chunk)
		if mapped {
			releasePages(chunk)
		}
	}
}

// grow returns s with room for n more elements, the capacity extrapolated
// from the input read so far: len(s) elements came from done of total
// bytes, so the rest of the input likely holds len(s)*(total-done)/done
// more; an eighth is added for variance. Doubling instead (or append's
// quarter steps) leaves up to half the array unused on a model whose
// objects are smaller than the initial estimate assumes, and the index is
// the largest structure after the file. The new capacity is at
// least a quarter more, so an input whose density rises late still costs
// few copies.
func grow[T any](s []T, n, done, total int) []T {
	c := cap(s) + cap(s)/4 + n
	if done > 0 && total > done {
		est := len(s) + int(int64(len(s))*int64(total-done)/int64(done))
		if est += est/8 + n; est > c {
			c = est
		}
	}
	g := make([]T, len(s), c)
	copy(g, s)
	return g
}
