package snapshot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/objgc/objgc/internal/modelgen"
)

// benchInput returns a generated snapshot of n objects (kept in
// $OBJGC_BENCH_DIR or the temporary folder between runs).
func benchInput(b *testing.B, n int) []byte {
	b.Helper()
	dir := os.Getenv("OBJGC_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "objgc-bench")
	}
	path := filepath.Join(dir, "scan", "snapshot.json")
	if _, err := os.Stat(path); err != nil {
		if _, _, _, err := modelgen.WriteFiles(filepath.Dir(path), modelgen.Config{Objects: n, RemoveApps: 0.1, Seed: 1, Indent: true}); err != nil {
			b.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkLoadSnapshot reads a 100,000-object snapshot into an index, one
// goroutine; BenchmarkValidBytes validates the same bytes with gjson for
// comparison.
func BenchmarkLoadSnapshot(b *testing.B) {
	data := benchInput(b, 100_000)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := LoadSnapshot(NewDocument("snapshot.json", data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidBytes(b *testing.B) {
	data := benchInput(b, 100_000)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !gjson.ValidBytes(data) {
			b.Fatal("invalid")
		}
	}
}
