package diff_test

import (
	"testing"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/diff"
	"github.com/objgc/objgc/internal/modelgen"
	"github.com/objgc/objgc/snapshot"
)

// BenchmarkPlanDanglingRefs reads, compares and orders each hostile shape
// of modelgen (60,000 references to one doomed id in one array, spread
// over 60,000 objects, 900 levels deep, in 300 nested copies; 245 objects
// each referencing 245 doomed ids; 1,000,000 tiny doomed objects; 60,000
// copies of one doomed object; one doomed publisher with 60,000 doomed
// subscribers in one cycle). Every shape must cost time linear in its
// size: a quadratic step shows first on the one-array shape.
func BenchmarkPlanDanglingRefs(b *testing.B) {
	for _, s := range modelgen.Shapes {
		n := 60_000
		if s == modelgen.TinyObjects {
			n = 1_000_000
		}
		data := modelgen.Hostile(s, n)
		b.Run(s.String(), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				snap, inc, err := snapshot.LoadModel(snapshot.NewDocument(s.String(), data))
				if err != nil {
					b.Fatal(err)
				}
				r, err := diff.Compare(snap, inc)
				if err != nil {
					b.Fatal(err)
				}
				if s != modelgen.TinyObjects && s != modelgen.Subscribers && len(r.Dangling) == 0 {
					b.Fatal("no dangling references")
				}
				order.NewPlan(r)
			}
		})
	}
}
