package writeback

import (
	"io"
	"os"
	"testing"

	"github.com/objgc/objgc/internal/modelgen"
	"github.com/objgc/objgc/internal/plantest"
)

// BenchmarkWriteBack100k writes back a generated 100,000-object model
// after a run where one doomed object in three failed.
func BenchmarkWriteBack100k(b *testing.B) {
	snapPath, incomingPath, err := modelgen.BenchPair(100_000)
	if err != nil {
		b.Fatal(err)
	}
	snapData, err := os.ReadFile(snapPath)
	if err != nil {
		b.Fatal(err)
	}
	incomingData, err := os.ReadFile(incomingPath)
	if err != nil {
		b.Fatal(err)
	}
	p := plantest.Plan(b, string(snapData), string(incomingData))
	out := Effects{Destroyed: make([]bool, len(p.Objects))}
	for i := range out.Destroyed {
		out.Destroyed[i] = i%3 != 0
	}
	b.SetBytes(int64(len(snapData) + len(incomingData)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := WriteBack(io.Discard, p, out, nil, true); err != nil {
			b.Fatal(err)
		}
	}
}
