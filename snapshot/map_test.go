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
	"strings"
	"testing"
	"time"
	"unsafe"
)

// mappedFile writes body to a file of the test's and reads it mapped
// (closed when the test ends).
func mappedFile(t *testing.T, body []byte) (name string, doc *Document) {
	t.Helper()
	name = filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(name, body, 0o644); err != nil {
		t.Fatal(err)
	}
	return name, readMapped(t, name)
}

// readMapped reads the file name mapped, whatever its size, until the
// test ends.
func readMapped(t *testing.T, name string) *Document {
	t.Helper()
	doc, err := readDocument(name, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(doc.Close)
	if !doc.Mapped() {
		t.Skip("files are not mapped here")
	}
	return doc
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
			mapped := readMapped(t, f)
			rs, ri, err := LoadModel(read)
			if err != nil {
				t.Fatal(err)
			}
			mapped.releaseNow()
			ms, mi, err := LoadModel(mapped)
			if err != nil {
				t.Fatal(err)
			}
			mapped.releaseNow()
			if !reflect.DeepEqual(summarize(rs), summarize(ms)) || !reflect.DeepEqual(summarize(ri), summarize(mi)) {
				t.Errorf("%s: the mapped model's trees differ from the read one's", f)
			}
			if read.SHA256() != mapped.SHA256() {
				t.Errorf("%s: sha256 %s mapped, %s read", f, mapped.SHA256(), read.SHA256())
			}
			mapped.releaseNow()
			if !bytes.Equal(read.Data, mapped.Data) {
				t.Errorf("%s: the mapped bytes differ from the file's after a release", f)
			}
		})
	}
}

// TestTruncatedMappedFile: a file truncated while it is mapped makes a read
// of it fault (SIGBUS); the loaders, and Protect for any other reader,
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

	err = protected(doc, func() {
		sink = doc.Data[len(doc.Data)-1] // a plain read of the mapping
	})
	if !errors.As(err, &ce) || ce.File != name {
		t.Fatalf("a read of a truncated mapped file under Protect: %v, want a *ChangedError naming %s", err, name)
	}

	err = protected(doc, func() { doc.SHA256() })
	if !errors.As(err, &ce) || ce.File != name {
		t.Fatalf("SHA256 of a truncated mapped file: %v, want a *ChangedError naming %s", err, name)
	}
}

// sink keeps a test's read of a mapping from being optimized away.
var sink byte

// protected runs f under Protect for doc, as a caller reading a
// document's bytes does.
func protected(doc *Document, f func()) (err error) {
	defer Protect(&err, func() []*Document { return []*Document{doc} })()
	f()
	return nil
}

// TestProtectPassesOtherPanics: Protect passes on a panic that is not a
// fault in one of its documents: another panic, and a fault in a mapped
// document it was not given.
func TestProtectPassesOtherPanics(t *testing.T) {
	_, doc := mappedFile(t, bytes.Repeat([]byte(" "), 1<<16))
	passes := func(what string, f func(), want func(r any) bool) {
		t.Helper()
		defer func() {
			if r := recover(); !want(r) {
				t.Fatalf("%s: recovered %v, want the panic passed on", what, r)
			}
		}()
		_ = protected(doc, f)
		t.Fatalf("%s: Protect swallowed a panic that was not a fault in its document", what)
	}
	passes("a panic", func() { panic("other") }, func(r any) bool { return r == "other" })

	name, other := mappedFile(t, bytes.Repeat([]byte(" "), 1<<16))
	if err := os.Truncate(name, 0); err != nil {
		t.Fatal(err)
	}
	passes("a fault in another document", func() { sink = other.Data[len(other.Data)-1] }, func(r any) bool {
		_, ok := r.(interface{ Addr() uintptr })
		return ok
	})
}

// TestCloseUnmaps: Close unmaps a mapped document, once whatever the
// number of calls, and a release after it touches nothing.
func TestCloseUnmaps(t *testing.T) {
	_, doc := mappedFile(t, bytes.Repeat([]byte(" "), 1<<16))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(doc.Data)))
	if !mappedAt(t, lo) {
		t.Fatalf("no mapping at %#x before Close", lo)
	}
	doc.Close()
	doc.Close()
	if mappedAt(t, lo) {
		t.Fatalf("a mapping at %#x after Close", lo)
	}
	doc.release()
	doc.maybeRelease()
}

// mappedAt reports whether the process maps address a
// (/proc/self/maps).
func mappedAt(t *testing.T, a uintptr) bool {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range strings.Split(string(maps), "\n") {
		var lo, hi uintptr
		if _, err := fmt.Sscanf(l, "%x-%x", &lo, &hi); err == nil && a >= lo && a < hi {
			return true
		}
	}
	return false
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
	mapped := readMapped(t, name)
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
