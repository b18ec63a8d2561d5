package destroy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/objgc/objgc/diff"
	"github.com/objgc/objgc/snapshot"
)

// TestPathsOfMappedModel checks that the paths Plan.Path renders all at
// once for a mapped model, in document order, are each object's
// ObjectPath, on every pair of testdata (mapped whatever their size),
// including plans whose planner asked for paths while it was planning (a
// cycle, a whole environment destroyed).
func TestPathsOfMappedModel(t *testing.T) {
	old := snapshot.MapThreshold
	snapshot.MapThreshold = 1
	defer func() { snapshot.MapThreshold = old }()
	files, err := filepath.Glob("../testdata/pairs/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no pairs: %v", err)
	}
	for _, f := range files {
		doc, err := snapshot.ReadDocument(f, os.Stdin)
		if err != nil {
			t.Fatal(err)
		}
		if !doc.Mapped() {
			t.Fatalf("%s is not mapped", f)
		}
		s, in, err := snapshot.LoadModel(doc)
		if err != nil {
			continue // the pairs that are errors on purpose
		}
		p := NewPlan(diff.Compare(s, in))
		for i := range p.Objects {
			if got, want := p.Path(i), s.ObjectPath(p.Objects[i].Snapshot); got != want {
				t.Errorf("%s: object %d: path %s, want %s", f, i, got, want)
			}
		}
		doc.Close()
	}
}
