package modelgen

import (
	"fmt"
	"strings"
)

// Shape names a hostile model shape: small files that cost a careless
// reader far more than their size (quadratic time, or memory out of
// proportion to the input).
type Shape int

const (
	// OneArray: one incoming object holds an array of N references to
	// one doomed id.
	OneArray Shape = iota
	// Spread: N incoming objects, each with one reference to the doomed
	// id, in one array.
	Spread
	// DeepPlain: N references to the doomed id in one array nested about
	// 900 levels deep in plain arrays and objects inside one object
	// (the reader's limit is 1,000 levels).
	DeepPlain
	// DeepCopies: a chain of nested objects about 300 deep (each owns the
	// next, through a plain array and object), each holding N/300
	// references to the doomed id.
	DeepCopies
	// ManyDoomed: about sqrt(N) incoming objects each referencing about
	// sqrt(N) distinct doomed ids.
	ManyDoomed
	// TinyObjects: one array of N tiny doomed objects (a 45-byte object
	// each), and nothing referencing them.
	TinyObjects
	// Duplicates: the snapshot holds N copies of one doomed object, each
	// with its own onDestruction record; the incoming model holds N
	// references to it.
	Duplicates
	// Subscribers: one doomed publisher whose onDestruction lists N
	// doomed subscribers, each of which subscribes back (one cycle of
	// N+1 objects).
	Subscribers
)

// Shapes lists every Shape, for tests that try them all.
var Shapes = []Shape{OneArray, Spread, DeepPlain, DeepCopies, ManyDoomed, TinyObjects, Duplicates, Subscribers}

func (s Shape) String() string {
	switch s {
	case OneArray:
		return "one-array"
	case Spread:
		return "spread"
	case DeepPlain:
		return "deep-plain"
	case DeepCopies:
		return "deep-copies"
	case ManyDoomed:
		return "many-doomed"
	case TinyObjects:
		return "tiny-objects"
	case Duplicates:
		return "duplicates"
	case Subscribers:
		return "subscribers"
	}
	return fmt.Sprintf("shape(%d)", int(s))
}

// doomedID is the id every hostile shape dooms (ManyDoomed adds more).
const doomedID = "00000000-dead-4000-8000-000000000001"

// Hostile returns a compact Murano envelope {"Objects", "ObjectsCopy",
// "Attributes"} of the given shape with n as its size parameter (see each
// Shape). The snapshot is an io.murano.Environment owning the doomed
// objects; the incoming model keeps the environment and adds the
// referrers. The same arguments always give the same bytes.
func Hostile(s Shape, n int) []byte {
	var snap, inc strings.Builder
	env := func(b *strings.Builder) {
		b.WriteString(`{"?":{"id":"env","type":"io.murano.Environment/0.0.0@io.murano"},"name":"hostile"`)
	}
	doomed := func(b *strings.Builder, id string) {
		fmt.Fprintf(b, `{"?":{"id":%q,"type":"com.example.Doomed/1.0.0@com.example"}}`, id)
	}
	refs := func(b *strings.Builder, id string, k int) {
		b.WriteByte('[')
		for i := 0; i < k; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, "%q", id)
		}
		b.WriteByte(']')
	}
	holder := func(b *strings.Builder, i int) {
		fmt.Fprintf(b, `{"?":{"id":"holder-%d","type":"com.example.Holder/1.0.0@com.example"}`, i)
	}
	env(&snap)
	env(&inc)
	switch s {
	case OneArray:
		snap.WriteString(`,"x":`)
		doomed(&snap, doomedID)
		inc.WriteString(`,"holder":`)
		holder(&inc, 0)
		inc.WriteString(`,"refs":`)
		refs(&inc, doomedID, n)
		inc.WriteByte('}')
	case Spread:
		snap.WriteString(`,"x":`)
		doomed(&snap, doomedID)
		inc.WriteString(`,"holders":[`)
		for i := 0; i < n; i++ {
			if i > 0 {
				inc.WriteByte(',')
			}
			holder(&inc, i)
			fmt.Fprintf(&inc, `,"ref":%q}`, doomedID)
		}
		inc.WriteByte(']')
	case DeepPlain:
		snap.WriteString(`,"x":`)
		doomed(&snap, doomedID)
		const depth = 900
		inc.WriteString(`,"holder":`)
		holder(&inc, 0)
		inc.WriteString(`,"deep":`)
		for i := 0; i < depth; i++ {
			if i%2 == 0 {
				inc.WriteByte('[')
			} else {
				inc.WriteString(`{"k\"ey":`)
			}
		}
		refs(&inc, doomedID, n)
		for i := depth - 1; i >= 0; i-- {
			if i%2 == 0 {
				inc.WriteByte(']')
			} else {
				inc.WriteByte('}')
			}
		}
		inc.WriteByte('}')
	case DeepCopies:
		snap.WriteString(`,"x":`)
		doomed(&snap, doomedID)
		const depth = 300
		per := max(n/depth, 1)
		inc.WriteString(`,"holder":`)
		for i := 0; i < depth; i++ {
			holder(&inc, i)
			inc.WriteString(`,"refs":`)
			refs(&inc, doomedID, per)
			inc.WriteString(`,"owns":[{"next":`)
		}
		inc.WriteString(`null`)
		inc.WriteString(strings.Repeat(`}]}`, depth))
	case ManyDoomed:
		k := 1
		for k*k < n {
			k++
		}
		ids := make([]string, k)
		snap.WriteString(`,"doomed":[`)
		for i := range ids {
			ids[i] = fmt.Sprintf("00000000-dead-4000-8000-%012d", i+1)
			if i > 0 {
				snap.WriteByte(',')
			}
			doomed(&snap, ids[i])
		}
		snap.WriteByte(']')
		inc.WriteString(`,"holders":[`)
		for i := 0; i < k; i++ {
			if i > 0 {
				inc.WriteByte(',')
			}
			holder(&inc, i)
			inc.WriteString(`,"refs":[`)
			for j, id := range ids {
				if j > 0 {
					inc.WriteByte(',')
				}
				fmt.Fprintf(&inc, "%q", id)
			}
			inc.WriteString(`]}`)
		}
		inc.WriteByte(']')
	case TinyObjects:
		snap.WriteString(`,"tiny":[`)
		for i := 0; i < n; i++ {
			if i > 0 {
				snap.WriteByte(',')
			}
			fmt.Fprintf(&snap, `{"?":{"id":"t%d","type":"a.T"}}`, i)
		}
		snap.WriteByte(']')
	case Duplicates:
		snap.WriteString(`,"copies":[`)
		for i := 0; i < n; i++ {
			if i > 0 {
				snap.WriteByte(',')
			}
			fmt.Fprintf(&snap, `{"?":{"id":%q,"type":"com.example.Doomed/1.0.0@com.example","dependencies":{"onDestruction":[{"subscriber":"env","handler":"h%d"}]}}}`, doomedID, i)
		}
		snap.WriteByte(']')
		inc.WriteString(`,"holder":`)
		holder(&inc, 0)
		inc.WriteString(`,"refs":`)
		refs(&inc, doomedID, n)
		inc.WriteByte('}')
	case Subscribers:
		fmt.Fprintf(&snap, `,"publisher":{"?":{"id":%q,"type":"com.example.Doomed/1.0.0@com.example","dependencies":{"onDestruction":[`, doomedID)
		for i := 0; i < n; i++ {
			if i > 0 {
				snap.WriteByte(',')
			}
			fmt.Fprintf(&snap, `{"subscriber":"s%d","handler":"onGone"}`, i)
		}
		snap.WriteString(`]}}},"subscribers":[`)
		for i := 0; i < n; i++ {
			if i > 0 {
				snap.WriteByte(',')
			}
			fmt.Fprintf(&snap, `{"?":{"id":"s%d","type":"a.S","dependencies":{"onDestruction":[{"subscriber":%q,"handler":null}]}}}`, i, doomedID)
		}
		snap.WriteByte(']')
	}
	snap.WriteByte('}')
	inc.WriteByte('}')
	return []byte(`{"Objects":` + inc.String() + `,"ObjectsCopy":` + snap.String() + `,"Attributes":[]}`)
}
