package pkgcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// benchCache writes a cache of n small packages straight into the layout
// as Add leaves them (manifest, one class file; the digests record; the
// id's usage and download lock files): n/2 FullNames in versions 1.0.0 and 2.0.0, so
// half the packages are outdated. It ends with sync(2): a cache being
// pruned was written long before, not a moment ago, and its writeback is
// not the prune's cost.
func benchCache(b testing.TB, n int) *Cache {
	b.Helper()
	c, err := Open(filepath.Join(b.TempDir(), "cache"))
	if err != nil {
		b.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		fn := fmt.Sprintf("com.example.bench.P%05d", i/2)
		version := []string{"1.0.0", "2.0.0"}[i%2]
		sum := sha256.Sum256([]byte(fn + "/" + version))
		id := hex.EncodeToString(sum[:])
		dir := c.entryDir(fn, version, id)
		if err := os.MkdirAll(filepath.Join(dir, "Classes"), 0o755); err != nil {
			b.Fatal(err)
		}
		files := map[string]string{
			"manifest.yaml":  fmt.Sprintf("Format: 1.4\nType: Application\nFullName: %s\nVersion: %s\nClasses:\n  %s: P.yaml\n", fn, version, fn),
			"Classes/P.yaml": "Namespaces:\n  =: com.example.bench\n  std: io.murano\nName: P\nExtends: std:Application\n",
		}
		rec := &digestRecord{FullName: fn, Version: version, ID: id, Installed: base.Add(time.Duration(i) * time.Second), Files: map[string]string{}}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
			s := sha256.Sum256([]byte(body))
			rec.Files[name] = hex.EncodeToString(s[:])
			rec.Size += int64(len(body))
		}
		if err := c.writeRecord(rec); err != nil {
			b.Fatal(err)
		}
		for _, lock := range []string{c.usageLockPath(id), c.downloadLockPath(id)} {
			if err := os.WriteFile(lock, nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	syncDisks()
	return c
}

// BenchmarkPrune10k prunes the outdated half of a 10,000-package cache.
func BenchmarkPrune10k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := benchCache(b, 10000)
		b.StartTimer()
		res, err := c.Prune(context.Background(), PruneOptions{Outdated: true})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Removed) != 5000 {
			b.Fatalf("removed %d, want 5000", len(res.Removed))
		}
	}
}

// BenchmarkList10k lists a 10,000-package cache.
func BenchmarkList10k(b *testing.B) {
	c := benchCache(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		list, err := c.List(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if len(list) != 10000 {
			b.Fatalf("listed %d", len(list))
		}
	}
}

// BenchmarkRemoveOutdated10k is the floor under BenchmarkPrune10k: the
// same cache, and only the deletion of the same 5,000 package directories
// (os.RemoveAll, 8 at a time), without listing, locks or renames.
func BenchmarkRemoveOutdated10k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := benchCache(b, 10000)
		b.StartTimer()
		removeOutdatedFloor(b, c, 10000)
	}
}

// removeOutdatedFloor deletes the n/2 version-1.0.0 packages
// (<FullName>/1.0.0/<id>) of a benchCache(n) 8 at a time, as a removal
// must at the least: one rename out of the engine's sight, the deletion
// of the directory and of its record (the lock files stay).
func removeOutdatedFloor(b *testing.B, c *Cache, n int) {
	var ids []string
	for j := 0; j < n; j += 2 {
		fn := fmt.Sprintf("com.example.bench.P%05d", j/2)
		sum := sha256.Sum256([]byte(fn + "/1.0.0"))
		ids = append(ids, fn+"/"+hex.EncodeToString(sum[:]))
	}
	if err := os.MkdirAll(c.trashDir(), 0o755); err != nil {
		b.Fatal(err)
	}
	next := make(chan string)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := 0
			for fid := range next {
				fn, id := filepath.Dir(fid), filepath.Base(fid)
				trash := filepath.Join(c.trashDir(), fmt.Sprintf("%d.%d", w, k))
				k++
				if err := os.Rename(c.entryDir(fn, "1.0.0", id), trash); err != nil {
					b.Error(err)
				}
				os.Remove(c.recordPath(id))
				if err := os.RemoveAll(trash); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for _, d := range ids {
		next <- d
	}
	close(next)
	wg.Wait()
}

// BenchmarkPruneVsFloor10k measures BenchmarkPrune10k and its floor
// BenchmarkRemoveOutdated10k on caches built alike, one right after the
// other (which goes first alternates), so that both see the same disk and
// the same load. It reports the seconds of each and their ratio
// (prune/floor, the target is at most 1.3).
func BenchmarkPruneVsFloor10k(b *testing.B) {
	var prune, floor time.Duration
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		cp, cf := benchCache(b, 10000), benchCache(b, 10000)
		runs := []func(){
			func() {
				t := time.Now()
				res, err := cp.Prune(context.Background(), PruneOptions{Outdated: true})
				prune += time.Since(t)
				if err != nil || len(res.Removed) != 5000 {
					b.Fatalf("prune: removed %d, %v", len(res.Removed), err)
				}
			},
			func() {
				t := time.Now()
				removeOutdatedFloor(b, cf, 10000)
				floor += time.Since(t)
			},
		}
		for k := range runs {
			syncDisks()
			runs[(k+i)%len(runs)]()
		}
		syncDisks()
	}
	b.ReportMetric(prune.Seconds()/float64(b.N), "prune-s/op")
	b.ReportMetric(floor.Seconds()/float64(b.N), "floor-s/op")
	b.ReportMetric(prune.Seconds()/floor.Seconds(), "prune/floor")
}
