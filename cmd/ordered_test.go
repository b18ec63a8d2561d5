package cmd

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/objgc/objgc/snapshot"
)

// TestRenderOrderedTruncatedMappedModel: the workers rendering a plan read
// the model's bytes; a mapped model truncated under them is the
// *snapshot.ChangedError naming it, from a worker as from the caller's
// goroutine, not a crash (SIGBUS).
func TestRenderOrderedTruncatedMappedModel(t *testing.T) {
	name := filepath.Join(t.TempDir(), "model.json")
	// The size from which snapshot.ReadDocument maps a file.
	if err := os.WriteFile(name, bytes.Repeat([]byte(" "), 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := snapshot.ReadDocument(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer doc.Close()
	if !doc.Mapped() {
		t.Skip("files are not mapped here")
	}
	if err := os.Truncate(name, 0); err != nil {
		t.Fatal(err)
	}
	// A few items are rendered on the caller's goroutine, which plan
	// protects (runPlan); more on the workers, each reading a byte of the
	// document.
	docs := []*snapshot.Document{doc}
	for _, n := range []int{renderChunk, 8 * renderChunk} {
		err := func() (err error) {
			defer snapshot.Protect(&err, func() []*snapshot.Document { return docs })()
			return renderOrdered(io.Discard, docs, n, func(b *bytes.Buffer, i int) {
				b.WriteByte(doc.Data[i*4096%len(doc.Data)])
			})
		}()
		var ce *snapshot.ChangedError
		if !errors.As(err, &ce) || ce.File != name {
			t.Fatalf("%d items: %v, want a *snapshot.ChangedError naming %s", n, err, name)
		}
	}
}
