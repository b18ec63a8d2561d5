package snapshot

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"
)

// mappedFile writes body to a file of the test's and reads it mapped
// (closed when the test ends).
func mappedFile(t *testing.T, body []byte) (name string, doc *Document) {
	t.Helper()
	mapAll(t)
	name = filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(name, body, 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := ReadDocument(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(doc.Close)
	if !doc.Mapped() {
		t.Fatal("not mapped")
	}
	return name, doc
}

// mapAll makes ReadDocument map every file for the test.
func mapAll(t *testing.T) {
	t.Helper()
	old := MapThreshold
	MapThreshold = 1
	t.Cleanup(func() { MapThreshold = old })
}

// TestMappedReadsAsRead: a model mapped from its file gives the same
// trees, paths, types and hash as the same file read into memory, and
// releasing its pages changes none of its bytes. The models are the real
// ones in testdata (see testdata/models/README.md for their origin).
func TestMappedReadsAsRead(t *testing.T) {
	files, err := filepath.Glob("../testdata/pairs/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no pairs in ../testdata/pairs: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			read, err := ReadDocument(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			if read.Mapped() {
				t.Fatalf("%s is mapped at the default threshold", f)
			}
			mapAll(t)
			mapped, err := ReadDocument(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer mapped.Close()
			if !mapped.Mapped() {
				t.Fatalf("%s: not mapped with MapThreshold 1", f)
			}
			rs, ri, err := LoadModel(read)
			if err != nil {
				t.Fatal(err)
			}
			mapped.Release()
			ms, mi, err := LoadModel(mapped)
			if err != nil {
				t.Fatal(err)
			}
			mapped.Release()
			if !reflect.DeepEqual(summarize(rs), summarize(ms)) || !reflect.DeepEqual(summarize(ri), summarize(mi)) {
				t.Errorf("%s: the mapped model's trees differ from the read one's", f)
			}
			if read.SHA256() != mapped.SHA256() {
				t.Errorf("%s: sha256 %s mapped, %s read", f, mapped.SHA256(), read.SHA256())
			}
			mapped.Release()
			if !bytes.Equal(read.Data, mapped.Data) {
				t.Errorf("%s: the mapped bytes differ from the file's after Release", f)
			}
		})
	}
}

// TestTruncatedMappedFile: a file truncated while it is mapped makes a read
// of it fault (SIGBUS); the loaders, and Guard around any other reader,
// turn that into a *ChangedError naming the file instead of a crash.
func TestTruncatedMappedFile(t *testing.T) {
	body := bytes.Repeat([]byte(" "), 1<<20)
	copy(body, `{"Objects": null}`)
	name, doc := mappedFile(t, body)
	if err := os.Truncate(name, 0); err != nil {
		t.Fatal(err)
	}
	var ce *ChangedError
	_, _, err := LoadModel(doc)
	if !errors.As(err, &ce) || ce.File != name {
		t.Fatalf("LoadModel of a truncated mapped file: %v, want a *ChangedError naming %s", err, name)
	}

	err = Guard(func() error {
		sink = doc.Data[len(doc.Data)-1] // a plain read of the mapping
		return nil
	})
	if !errors.As(err, &ce) || ce.File != name {
		t.Fatalf("a read of a truncated mapped file under Guard: %v, want a *ChangedError naming %s", err, name)
	}

	err = Guard(func() error {
		doc.SHA256()
		return nil
	})
	if !errors.As(err, &ce) || ce.File != name {
		t.Fatalf("SHA256 of a truncated mapped file: %v, want a *ChangedError naming %s", err, name)
	}
}

// sink keeps a test's read of a mapping from being optimized away.
var sink byte

// TestGuardPassesOtherPanics: Guard re-panics with what is not a fault in
// a mapped document.
func TestGuardPassesOtherPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "other" {
			t.Fatalf("recovered %v, want the panic passed on", r)
		}
	}()
	_ = Guard(func() error { panic("other") })
	t.Fatal("Guard swallowed a panic that was not a fault")
}

// TestCheckMapped: a mapped file written in place after it was mapped is a
// *ChangedError (its bytes may be part old, part new); an untouched one and
// a file read into memory (its own copy) are not.
func TestCheckMapped(t *testing.T) {
	name := filepath.Join(t.TempDir(), "model.json")
	body := []byte(`{"Objects": null, "ObjectsCopy": null}`)
	if err := os.WriteFile(name, body, 0o644); err != nil {
		t.Fatal(err)
	}
	// An hour back, so that the write below changes the modification
	// time whatever the clock's granularity.
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(name, past, past); err != nil {
		t.Fatal(err)
	}
	read, err := ReadDocument(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	mapAll(t)
	mapped, err := ReadDocument(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.Close()
	if err := mapped.CheckMapped(); err != nil {
		t.Fatalf("untouched file: %v", err)
	}
	// The same bytes written in place: size and contents alike, the
	// status change time is not.
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(body[:1], 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var ce *ChangedError
	if err := mapped.CheckMapped(); !errors.As(err, &ce) || ce.File != name {
		t.Fatalf("file written in place: %v, want a *ChangedError naming %s", err, name)
	}
	if err := read.CheckMapped(); err != nil {
		t.Fatalf("a document read into memory: %v, want nil", err)
	}
}

// TestHashYieldsToReaders: the hash of a mapped document waits while as
// many goroutines index it as Go runs at once, and goes on once one
// leaves; the loaders leave every time (TestParallelScanSameAsOnePass
// checks the count after every load, broken inputs included).
func TestHashYieldsToReaders(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 3<<20)
	_, doc := mappedFile(t, body)
	n := runtime.GOMAXPROCS(0)
	for range n {
		doc.reading()
	}
	doc.Hash()
	done := make(chan string)
	go func() { done <- doc.SHA256() }()
	select {
	case <-done:
		t.Fatal("the hash ran while the processors were all indexing the document")
	case <-time.After(50 * time.Millisecond):
	}
	doc.leaving()
	select {
	case sum := <-done:
		if want := fmt.Sprintf("%x", sha256.Sum256(body)); sum != want {
			t.Fatalf("sha256 %s, want %s", sum, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the hash did not go on once a reader left")
	}
	for range n - 1 {
		doc.leaving()
	}
}
