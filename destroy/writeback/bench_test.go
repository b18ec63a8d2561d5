package writeback

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/internal/modelgen"
	"github.com/objgc/objgc/snapshot"
)

// benchModel returns the paths of a generated snapshot of n objects and an
// incoming model with a tenth of the applications removed, made once per
// process in a temporary folder (or in $OBJGC_BENCH_DIR, kept between runs).
func benchModel(b *testing.B, n int) (snapPath, incomingPath string) {
	b.Helper()
	dir := os.Getenv("OBJGC_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "objgc-bench")
	}
	dir = filepath.Join(dir, strconv.Itoa(n))
	snapPath, incomingPath = filepath.Join(dir, "snapshot.json"), filepath.Join(dir, "incoming.json")
	if _, err := os.Stat(incomingPath); err == nil {
		return snapPath, incomingPath
	}
	s, i, _, err := modelgen.WriteFiles(dir, modelgen.Config{Objects: n, RemoveApps: 0.1, Seed: 1, Indent: true})
	if err != nil {
		b.Fatal(err)
	}
	return s, i
}

// planJSON plans two bare object trees (or envelopes), as --snapshot and
// --graph do.
func planJSON(tb testing.TB, snapJSON, incomingJSON string) *order.Plan {
	tb.Helper()
	snap, err := snapshot.LoadSnapshot(snapshot.NewDocument("snap.json", []byte(snapJSON)))
	if err != nil {
		tb.Fatal(err)
	}
	in, err := snapshot.LoadGraph(snapshot.NewDocument("in.json", []byte(incomingJSON)))
	if err != nil {
		tb.Fatal(err)
	}
	return order.NewPlan(mustCompare(snap, in))
}

// BenchmarkWriteBack100k writes back a generated 100,000-object model
// after a run where one doomed object in three failed.
func BenchmarkWriteBack100k(b *testing.B) {
	snapPath, incomingPath := benchModel(b, 100_000)
	snapData, err := os.ReadFile(snapPath)
	if err != nil {
		b.Fatal(err)
	}
	incomingData, err := os.ReadFile(incomingPath)
	if err != nil {
		b.Fatal(err)
	}
	p := planJSON(b, string(snapData), string(incomingData))
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
