package snapshot

import (
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// mapThreshold is the size in bytes from which ReadDocument maps a file
// read-only instead of reading it into memory (on Linux). A mapped file's
// pages are released from the resident set as they are read (mapping), so
// that planning a model holds little more of it in memory than the pages
// read last, the page cache keeping the rest (docs/performance.md). It is
// low so that a model of a million tiny objects, whose index is as large
// as its file, is mapped too rather than held whole beside its index: the
// plan must fit its memory bound. Smaller files are read: the difference
// is small and a read file cannot change under the reader.
const mapThreshold = 1 << 20

// trimInterval is how often the pages of a mapped document are released
// in the background: a loop reading ids of objects far apart maps 15 MB
// a millisecond (see releaseGap); a release of a model with few pages
// resident costs 20 to 60 us, a few percent of a core at this interval.
// The loops of this package that read much of a document in little time
// (the scanner, the id index, the loops over string values, the lookups
// of many ids) also release as they go: a goroutine that waits for a
// processor while two others read is no bound.
const trimInterval = 2 * time.Millisecond

// releaseGap is the least time between two releases that do anything:
// each walks the mapping's page tables (20 to 60 us for a 370 MB model
// with few pages resident: at 250 us apart a few percent of a loop's
// time), while a loop over objects far apart maps 10 to 20 MB of pages a
// millisecond: the kernel maps the whole folio of page cache around each
// fault, up to a megabyte, for a read of a few bytes.
const releaseGap = 250 * time.Microsecond

// releaseSample: maybeRelease releases on one call in this many, at
// random: a loop calling it for every object lets the release wait a few
// objects more, microseconds against releaseGap.
const releaseSample = 16

// clockBase is the origin of mapping.released.
var clockBase = time.Now()

// mapping is what a Document read-only mapped from its file holds beside
// its bytes: the background release (trim) and the lock that keeps every
// release before the unmapping (Close). A release of pages no longer
// mapped would drop whatever the address range holds by then.
type mapping struct {
	mu       sync.RWMutex // read by a release, written by Close
	closed   bool
	stop     chan struct{} // ends trim
	released atomic.Int64  // time of the last release, in nanoseconds since clockBase
}

// startMapping sets d up as mapped and starts releasing its pages in the
// background every trimInterval until Close.
func (d *Document) startMapping() {
	d.m = &mapping{stop: make(chan struct{})}
	go d.trim()
}

// trim releases d's pages every trimInterval until Close: the pages a
// reader touched since the last release leave the resident set, whatever
// the reader (the scanner, a lookup, a caller copying the document's
// bytes).
func (d *Document) trim() {
	t := time.NewTicker(trimInterval)
	defer t.Stop()
	for {
		select {
		case <-d.m.stop:
			return
		case <-t.C:
			d.releaseNow()
		}
	}
}

// maybeRelease is release for loops that call it for every object: it
// looks at the clock (release) on one call in releaseSample, chosen at
// random. Reading the clock on every call costs more than the loops' own
// work on small objects; a counter shared by the loops on both cores would
// bounce between them.
func (d *Document) maybeRelease() {
	if d != nil && d.m != nil && rand.Uint32()%releaseSample == 0 {
		d.release()
	}
}

// release drops the pages of a mapped document from the resident set, at
// most once every releaseGap (a no-op for a document in memory). The pages
// read again come back from the page cache with the same bytes. Safe for
// concurrent use.
func (d *Document) release() {
	if d == nil || d.m == nil {
		return
	}
	now := int64(time.Since(clockBase)) // the monotonic clock alone
	last := d.m.released.Load()
	if now-last < int64(releaseGap) || !d.m.released.CompareAndSwap(last, now) {
		return
	}
	d.releaseNow()
}

// releaseNow drops the pages of a mapped document from the resident set,
// unless it is closed (unmapped).
func (d *Document) releaseNow() {
	d.m.mu.RLock()
	if !d.m.closed {
		releasePages(d.Data)
	}
	d.m.mu.RUnlock()
}

// Mapped reports whether Data is a read-only mapping of the file.
func (d *Document) Mapped() bool { return d.m != nil }

// Close unmaps a mapped document: Data and every string read from the
// document (ids aside: Tree.ID's are the index's own copy) must not be
// used after it, and neither may the document be read or loaded. A
// document in memory is left to the garbage collector. Safe to call more
// than once and on any document, nil included; call it once the trees of
// the document and what was read from them are done with.
func (d *Document) Close() {
	if d == nil || d.m == nil {
		return
	}
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	if d.m.closed {
		return
	}
	d.m.closed = true
	close(d.m.stop)
	unmap(d.Data)
}

// ChangedError is a fault reading a mapped document: the file was
// truncated while objgc read it.
type ChangedError struct {
	File string
}

func (e *ChangedError) Error() string {
	return e.File + ": the file was truncated or rewritten while objgc read it; run again once it is written whole"
}

// Protect makes a fault reading one of the mapped documents that docs
// returns an error rather than a crash, for the function that defers the
// function Protect returns:
//
//	defer snapshot.Protect(&err, func() []*snapshot.Document { return docs })()
//
// A file truncated under its mapping makes its reader fault (SIGBUS):
// Protect makes the calling goroutine panic on a fault instead
// (debug.SetPanicOnFault) and the deferred function recovers, setting
// *errp to a *ChangedError naming the document's file, as it does for a
// *ChangedError panic (SHA256's). docs is called only then, so that it
// may name documents read after Protect. Any other panic passes on. The
// loaders and the methods of Tree protect themselves or are called under
// a loader; a goroutine that reads a mapped document's bytes itself
// (Data, strings of a tree) defers Protect.
func Protect(errp *error, docs func() []*Document) (unprotect func()) {
	old := debug.SetPanicOnFault(true)
	return func() {
		r := recover()
		debug.SetPanicOnFault(old)
		if r == nil {
			return
		}
		if err := faultError(r, docs()); err != nil {
			*errp = err
			return
		}
		panic(r)
	}
}

// do runs f under Protect for the documents docs: the loaders' and the
// scanners' goroutines.
func do(f func() error, docs ...*Document) (err error) {
	defer Protect(&err, func() []*Document { return docs })()
	return f()
}

// faultError returns the *ChangedError that r, a recovered panic, is: a
// *ChangedError, or a fault at an address of one of docs; nil for any
// other panic.
func faultError(r any, docs []*Document) error {
	if e, ok := r.(*ChangedError); ok {
		return e
	}
	f, ok := r.(interface{ Addr() uintptr })
	if !ok {
		return nil
	}
	for _, d := range docs {
		if d == nil || d.m == nil {
			continue
		}
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(d.Data)))
		if a := f.Addr(); a >= lo && a < lo+uintptr(len(d.Data)) {
			return &ChangedError{File: d.Name}
		}
	}
	return nil
}

// releaseEvery is how many objects the loops over a whole document or tree
// read between two calls of Document.release.
const releaseEvery = 1 << 12
