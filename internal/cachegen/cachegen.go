// Package cachegen writes package caches in murano-engine's layout for
// the benchmarks of objgc cache prune, and carries out the floor a prune
// is measured against: the same disk work without objgc's listing,
// policies or locks.
//
// A cache of n packages is n/2 FullNames, each in versions 1.0.0 and
// 2.0.0, as objgc cache add leaves them: <root>/<FullName>/<version>/<id>/
// with manifest.yaml and Classes/P.yaml, <root>/<id>_usage.lock and
// <root>/<id>_download.lock, and the digests record
// <root>/.objgc/records/<id>.json. prune --outdated removes the n/2
// packages of version 1.0.0.
package cachegen

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// FullName returns the FullName of package i of a generated cache.
func FullName(i int) string { return fmt.Sprintf("com.example.bench.P%05d", i/2) }

// Version returns the version of package i.
func Version(i int) string { return []string{"1.0.0", "2.0.0"}[i%2] }

// ID returns the id of package i (the sha256 of its FullName and
// version, hex, as long as objgc's ids).
func ID(i int) string {
	sum := sha256.Sum256([]byte(FullName(i) + "/" + Version(i)))
	return hex.EncodeToString(sum[:])
}

// record is the part of objgc's digests record that prune reads.
type record struct {
	FullName  string            `json:"full_name"`
	Version   string            `json:"version"`
	ID        string            `json:"id"`
	Installed time.Time         `json:"installed"`
	Size      int64             `json:"size"`
	Files     map[string]string `json:"files"`
}

// Write writes a cache of n packages at root (created if needed).
func Write(root string, n int) error {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	records := filepath.Join(root, ".objgc", "records")
	if err := os.MkdirAll(records, 0o755); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		fn, version, id := FullName(i), Version(i), ID(i)
		dir := filepath.Join(root, fn, version, id)
		if err := os.MkdirAll(filepath.Join(dir, "Classes"), 0o755); err != nil {
			return err
		}
		files := map[string]string{
			"manifest.yaml":  fmt.Sprintf("Format: 1.4\nType: Application\nFullName: %s\nVersion: %s\nClasses:\n  %s: P.yaml\n", fn, version, fn),
			"Classes/P.yaml": "Namespaces:\n  =: com.example.bench\n  std: io.murano\nName: P\nExtends: std:Application\n",
		}
		rec := record{FullName: fn, Version: version, ID: id, Installed: base.Add(time.Duration(i) * time.Second), Files: map[string]string{}}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(body), 0o644); err != nil {
				return err
			}
			s := sha256.Sum256([]byte(body))
			rec.Files[name] = hex.EncodeToString(s[:])
			rec.Size += int64(len(body))
		}
		data, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(records, id+".json"), data, 0o644); err != nil {
			return err
		}
		for _, lock := range []string{"_usage.lock", "_download.lock"} {
			if err := os.WriteFile(filepath.Join(root, id+lock), nil, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// Floor removes the n/2 packages of version 1.0.0 of a cache Write(root,
// n) made, 8 at a time, doing what a removal must do on disk at the
// least: one rename into .objgc/trash/, the deletion of the package
// directory and of its record (the lock files stay, as a removal leaves
// them for the engine). It lists nothing, reads nothing and takes no
// lock.
func Floor(root string, n int) error {
	trash := filepath.Join(root, ".objgc", "trash")
	if err := os.MkdirAll(trash, 0o755); err != nil {
		return err
	}
	next := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var first error
			for i := range next {
				id := ID(i)
				t := filepath.Join(trash, fmt.Sprintf("%d.%d", w, i))
				if err := os.Rename(filepath.Join(root, FullName(i), Version(i), id), t); err != nil && first == nil {
					first = err
				}
				os.Remove(filepath.Join(root, ".objgc", "records", id+".json"))
				if err := os.RemoveAll(t); err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		}()
	}
	for i := 0; i < n; i += 2 {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
