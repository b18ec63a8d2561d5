package snapshot

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestIDIndex checks the id index against a Go map: ids of every length
// (the empty one too), repeats that replace the stored index, growth from
// a hint far below the count, and misses.
func TestIDIndex(t *testing.T) {
	for _, hint := range []int{0, 3, 100, 5000} {
		t.Run(fmt.Sprint("hint=", hint), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(hint)))
			tr := &Tree{}
			want := map[string]int32{}
			x := newIDIndex(hint)
			for i := range 3000 {
				id := fmt.Sprintf("%03x", r.IntN(2000))[:r.IntN(4)]
				tr.Objects = append(tr.Objects, Object{id: strRef{off: int32(len(tr.ids)), n: int32(len(id))}})
				tr.ids = append(tr.ids, id...)
				prev, had := x.put(tr, int32(i))
				w, ok := want[id]
				if had != ok || (ok && prev != w) {
					t.Fatalf("put(%q) = %d, %v; want %d, %v", id, prev, had, w, ok)
				}
				want[id] = int32(i)
			}
			if x.n != len(want) {
				t.Errorf("n = %d, want %d", x.n, len(want))
			}
			for id, w := range want {
				if got, ok := x.get(tr, id); !ok || got != w {
					t.Errorf("get(%q) = %d, %v; want %d, true", id, got, ok, w)
				}
			}
			for _, id := range []string{"zz", "not an id", "12345"} {
				if got, ok := x.get(tr, id); ok {
					t.Errorf("get(%q) = %d, true; want a miss", id, got)
				}
			}
		})
	}
	var empty idIndex
	if _, ok := empty.get(nil, "a"); ok {
		t.Error("the zero index found an id")
	}
}
