package snapshot

import (
	"bytes"
	"testing"

	"github.com/objgc/objgc/internal/modelgen"
)

// TestIndexSlackOnSmallObjects checks that the object index of a model of
// objects much smaller than a size-based estimate would assume (44 bytes
// each) is not left half empty: it is sized from the count of headers
// (scan), so at most rounding is unused: doubling would leave most of
// the capacity unused here, memory the plan's bound has no room for.
func TestIndexSlackOnSmallObjects(t *testing.T) {
	var buf bytes.Buffer
	if err := modelgen.Tiny(&buf, 200_000); err != nil {
		t.Fatal(err)
	}
	idx, err := scanWith(NewDocument("tiny", buf.Bytes()), false)
	if err != nil {
		t.Fatal(err)
	}
	n, c := len(idx.objects), cap(idx.objects)
	if n < 200_000 {
		t.Fatalf("the model has %d objects, want at least 200000", n)
	}
	if float64(c) > 1.25*float64(n) {
		t.Errorf("object index capacity %d for %d objects: %.0f%% unused, want at most 25%%", c, n, 100*float64(c-n)/float64(n))
	}
}
