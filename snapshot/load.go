package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/objgc/objgc/internal/inputfile"
	"github.com/objgc/objgc/internal/jsonedit"
)

// Document is one input held in memory, or for a file of MapThreshold
// bytes or more, mapped read-only from the file.
type Document struct {
	Name string // the path as given; "-" is shown as <stdin>
	Data []byte // never modified once read

	sumOnce  sync.Once
	sum      string
	sumFault any // the fault that stopped the hash (a *ChangedError)
	// file is the mapped file, open for the hash to read with pread(2)
	// (hash); closed once hashed.
	file *os.File
	// readers counts the goroutines that read the document to index it
	// (the scanners, the trees' id indexes; reading and leaving): the
	// hash of a mapped document waits while they fill the processors.
	readers atomic.Int32
	// info is the file's status when it was opened for reading; nil
	// for standard input and NewDocument.
	info fs.FileInfo

	// mapped is set when Data is a read-only mapping of the file; stop
	// ends the goroutine that releases its pages (Close).
	mapped    bool
	stop      chan struct{}
	closeOnce sync.Once
	released  atomic.Int64 // time of the last Release, in nanoseconds since clockBase
}

// MapThreshold is the size in bytes from which ReadDocument maps a file
// read-only instead of reading it into memory (on Linux). A mapped file's
// pages are released from the resident set every TrimInterval, so that
// planning a model holds little more of it in memory than the pages read
// last, the page cache keeping the rest (docs/performance.md). It is low
// so that a model of a million tiny objects, whose index is as large as
// its file, is mapped too rather than held whole beside its index: the
// plan must fit its memory bound. Smaller files are read: the difference is
// small and a read file cannot change under the reader. Tests lower it.
var MapThreshold int64 = 1 << 20

// TrimInterval is how often the pages of a mapped document are released
// in the background: a loop reading ids of objects far apart maps 15 MB
// a millisecond (see releaseGap); a release of a model with few pages
// resident costs 20 to 60 us, a few percent of a core at this interval.
// Loops that read much of a document in little time (the scanner, the id
// index, the comparison, the loops over doomed objects) also call Release
// as they go: a goroutine that waits for a processor while two others
// read is no bound.
const TrimInterval = 2 * time.Millisecond

// releaseGap is the least time between two Releases that do anything:
// each walks the mapping's page tables (20 to 60 us for a 370 MB model
// with few pages resident: at 250 us apart a few percent of a loop's
// time), while a loop over objects far apart maps 10 to 20
// MB of pages a millisecond: the kernel maps the whole folio of page
// cache around each fault, up to a megabyte, for a read of a few bytes.
// Loops over objects far apart call Release for every object, and loops
// over a whole tree every few thousand.
const releaseGap = 250 * time.Microsecond

// releaseSample: MaybeRelease releases on one call in this many, at
// random: a loop calling it for every object lets the release wait a few
// objects more, microseconds against releaseGap.
const releaseSample = 16

// clockBase is the origin of Document.released.
var clockBase = time.Now()

// MaybeRelease is Release for loops that call it for every object: it looks
// at the clock (Release) on one call in releaseSample, chosen at random.
// Reading the clock on every call costs more than the loops' own work on
// small objects; a counter shared by the loops on both cores would bounce
// between them.
func (d *Document) MaybeRelease() {
	if d != nil && d.mapped && rand.Uint32()%releaseSample == 0 {
		d.Release()
	}
}

// Release drops the pages of a mapped document from the resident set, at
// most once every releaseGap (a no-op for a document in memory). The pages
// read again come back from the page cache with the same bytes. Safe for
// concurrent use.
func (d *Document) Release() {
	if d == nil || !d.mapped {
		return
	}
	now := int64(time.Since(clockBase)) // the monotonic clock alone
	last := d.released.Load()
	if now-last < int64(releaseGap) || !d.released.CompareAndSwap(last, now) {
		return
	}
	release(d.Data)
}

// Mapped reports whether Data is a read-only mapping of the file.
func (d *Document) Mapped() bool { return d.mapped }

// Close releases the pages of a mapped document and stops releasing them
// in the background (the mapping stays: strings of the document share its
// memory; pages read after Close stay resident). Safe to call more than once
// and on any document, nil included.
func (d *Document) Close() {
	if d != nil && d.mapped {
		d.closeOnce.Do(func() {
			close(d.stop)
			release(d.Data)
		})
	}
}

// ChangedError is a fault reading a mapped document: the file was
// truncated while objgc read it.
type ChangedError struct {
	File string
}

func (e *ChangedError) Error() string {
	return e.File + ": the file was truncated or rewritten while objgc read it; run again once it is written whole"
}

// mappedDocs are the mapped documents, to tell a fault in one of them
// (Guard) from any other.
var mappedDocs struct {
	sync.Mutex
	docs []*Document
}

// faultIn returns the mapped document holding addr, or nil.
func faultIn(addr uintptr) *Document {
	mappedDocs.Lock()
	defer mappedDocs.Unlock()
	for _, d := range mappedDocs.docs {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(d.Data)))
		if addr >= lo && addr < lo+uintptr(len(d.Data)) {
			return d
		}
	}
	return nil
}

// Guard runs f with a fault reading a mapped document turned into a
// *ChangedError: a file truncated under a mapping makes its reader fault
// (SIGBUS), and Guard makes f's goroutine panic on it
// (debug.SetPanicOnFault) and recovers. f's other panics pass. The
// loaders guard themselves; a goroutine that reads a mapped document's
// bytes later (its ids, say) runs under Guard.
func Guard(f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer catchFault(&err)
	return f()
}

// GuardEach runs f(0) to f(n-1), each on a goroutine of its own under
// Guard, waits for all of them and returns the first error in that order:
// the work of a loop over a mapped model split between the processors.
func GuardEach(n int, f func(k int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() { errs[k] = Guard(func() error { return f(k) }) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// catchFault is Guard's recovery: a *ChangedError (from SHA256) or a fault
// at an address of a mapped document becomes *errp; anything else panics
// again.
func catchFault(errp *error) {
	r := recover()
	if r == nil {
		return
	}
	if e, ok := r.(*ChangedError); ok {
		*errp = e
		return
	}
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		if d := faultIn(f.Addr()); d != nil {
			*errp = &ChangedError{File: d.Name}
			return
		}
	}
	panic(r)
}

// Unchanged reports whether the file the document was read from is, by
// its status now, still what was read: the same file (os.SameFile, so
// that a file renamed over it, as an atomic write does, is a change),
// with the same size, modification time and (on Linux) status change
// time, which a write in place sets whatever the writer does to the
// modification time. A document read from standard input or made with
// NewDocument is never unchanged.
func (d *Document) Unchanged() bool {
	if d.info == nil {
		return false
	}
	st, err := os.Stat(d.Name)
	return err == nil && os.SameFile(st, d.info) && st.Size() == d.info.Size() && st.ModTime().Equal(d.info.ModTime()) && sameCtime(st, d.info)
}

// CheckMapped returns a *ChangedError when d is mapped and its file is no
// longer what was mapped (Unchanged): a mapping shows the file's bytes as
// they are now, not as they were read, so a plan or an apply that read a
// file written in place meanwhile may have read some of each. A document
// read into memory is its own copy: nil.
func (d *Document) CheckMapped() error {
	if d == nil || !d.mapped || d.Unchanged() {
		return nil
	}
	return &ChangedError{File: d.Name}
}

// view returns a string sharing Data's memory (Data is never modified).
func (d *Document) view(start, end int) string {
	if end <= start {
		return ""
	}
	return unsafe.String(&d.Data[start], end-start)
}

// SHA256 returns the hex sha256 of Data, computed once on first use (or
// started by Hash). It panics with a *ChangedError when the file of a
// mapped document was truncated while it was hashed (see Guard).
func (d *Document) SHA256() string {
	d.sumOnce.Do(d.hash)
	if d.sumFault != nil {
		panic(d.sumFault)
	}
	return d.sum
}

// Hash starts computing the document's sha256 (SHA256) in the background:
// every plan and apply names its inputs' sha256, and hashing while the
// document is scanned costs no wall time on a second core.
func (d *Document) Hash() { go d.sumOnce.Do(d.hash) }

func (d *Document) hash() {
	if d.file != nil {
		d.hashFile()
		return
	}
	err := Guard(func() error {
		h := sha256.New()
		eachChunk(d.Data, d.mapped, func(chunk []byte) { h.Write(chunk) })
		d.sum = hex.EncodeToString(h.Sum(nil))
		return nil
	})
	if err != nil {
		d.sumFault = err
	}
}

// reading notes one more goroutine indexing the document; leaving, one
// less. hashFile yields to them: it hashes a chunk only while fewer of them
// run than the processors Go may use, so that on two cores the hash is
// done where one of the two scanners has finished its tree (the trees do
// not end together) and in the stages after the reading, which leave a
// core idle part of the time, rather than taking part of each core from
// the scanners, which set the reading's time.
func (d *Document) reading() { d.readers.Add(1) }

func (d *Document) leaving() { d.readers.Add(-1) }

// waitReaders returns once fewer goroutines index the document than Go
// may run at once, looking every millisecond (a chunk is hashed in about
// one).
func (d *Document) waitReaders() {
	for int(d.readers.Load()) >= runtime.GOMAXPROCS(0) {
		time.Sleep(time.Millisecond)
	}
}

// hashFile hashes a mapped document by reading its file (pread(2), a
// chunk at a time) rather than its mapping: the bytes are the same, but
// reading the mapping faulted every page in again beside the scanners and
// released each chunk (madvise(2)), which interrupts the other cores to
// flush their TLBs. A file that ends before the mapping does
// was truncated meanwhile: a *ChangedError, as a fault on the mapping
// would be. Any other reading error is one too: the bytes hashed would not
// be the bytes read.
func (d *Document) hashFile() {
	defer d.file.Close()
	h := sha256.New()
	buf := make([]byte, 1<<20)
	var off int64
	for off < int64(len(d.Data)) {
		d.waitReaders()
		n, err := d.file.ReadAt(buf[:min(int64(len(buf)), int64(len(d.Data))-off)], off)
		h.Write(buf[:n])
		off += int64(n)
		if err != nil {
			d.sumFault = &ChangedError{File: d.Name}
			return
		}
	}
	d.sum = hex.EncodeToString(h.Sum(nil))
}

// ReadDocument reads the file name, or stdin when name is "-". Errors name
// the file and say what was expected: a file that does not exist, a
// directory, an unreadable file, a named pipe, socket or device (refused
// before it is opened, and opened without waiting for a writer: see
// CheckInput).
func ReadDocument(name string, stdin io.Reader) (*Document, error) {
	if name == "-" {
		if stdin == nil {
			return nil, errors.New("<stdin>: no standard input")
		}
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("<stdin>: reading: %w", err)
		}
		return &Document{Name: "<stdin>", Data: data}, nil
	}
	st, err := inputfile.Check(name)
	switch {
	case errors.Is(err, inputfile.ErrNotRegular):
		return nil, notRegular(err)
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such file; expected a Murano model (JSON)", name)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	case st.IsDir():
		return nil, fmt.Errorf("%s: is a directory; expected a Murano model file (JSON)", name)
	case st.Size() > MaxSize:
		return nil, fmt.Errorf("%s: %d bytes; at most %d are supported", name, st.Size(), MaxSize)
	}
	d, err := readFile(name, st.Size())
	if errors.Is(err, inputfile.ErrNotRegular) {
		return nil, notRegular(err) // swapped for a pipe since the check
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d.Name = name
	if d.mapped {
		mappedDocs.Lock()
		mappedDocs.docs = append(mappedDocs.docs, d)
		mappedDocs.Unlock()
		d.stop = make(chan struct{})
		go trim(d.Data, TrimInterval, d.stop)
	}
	return d, nil
}

// CheckInput refuses, without opening it, an input file that ReadDocument
// would refuse for what it is: a named pipe, a socket or a device (the
// error wraps inputfile.ErrNotRegular and says what to give instead).
// "-" (standard input), a regular file and a directory pass; any other
// problem (a missing file) is left to ReadDocument to report. apply calls
// it before it takes the lock, which it would otherwise hold while the
// read waited for a writer that may never come.
func CheckInput(name string) error {
	if name == "-" {
		return nil
	}
	if _, err := inputfile.Check(name); errors.Is(err, inputfile.ErrNotRegular) {
		return notRegular(err)
	}
	return nil
}

func notRegular(err error) error {
	return fmt.Errorf("%w; objgc reads its inputs from regular files, or from standard input given as -", err)
}

// readFile is os.ReadFile into a buffer sized from the file's size and
// advised to be backed by huge pages (adviseHuge): copying a large model
// into fresh memory is mostly page faults otherwise. A regular file of
// MapThreshold bytes or more is mapped instead. The document keeps the
// file's status taken before the first byte was read (for
// Document.Unchanged).
func readFile(name string, size int64) (*Document, error) {
	f, info, err := inputfile.Open(name)
	if err != nil {
		return nil, err
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	if info.Mode().IsRegular() && info.Size() >= MapThreshold && info.Size() <= MaxSize {
		if data, err := mapFile(f, info.Size()); err == nil {
			// The hash reads the file (hashFile): it stays open.
			keep = true
			return &Document{Data: data, info: info, mapped: true, file: f}, nil
		}
	}
	// One byte more than the size, to see the end without growing; the
	// file may also have grown since it was stat'ed.
	data := make([]byte, 0, int(size)+1)
	adviseHuge(data)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return &Document{Data: data, info: info}, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

// NewDocument wraps data already in memory.
func NewDocument(name string, data []byte) *Document {
	return &Document{Name: name, Data: data}
}

// form is the shape of a document's root.
type form int

const (
	formBare     form = iota // an object tree
	formEnvelope             // {"Objects", "ObjectsCopy", "Attributes"}
	formTask                 // {"model": envelope, ...}
)

// Span is the byte range Data[Start:End] of a document.
type Span struct{ Start, End int }

// Envelope is where a Murano envelope {"Objects", "ObjectsCopy",
// "Attributes"} sits in its document, as the reader found it: the write-back
// replaces these bytes without parsing the document again.
type Envelope struct {
	// Span is the envelope's JSON object: the whole document's root, or
	// for an engine task the value of its "model" key.
	Span
	// Task is set for an engine task {"model": envelope, ...}: the bytes
	// outside Span are the task's own and are kept as they are.
	Task bool
	// Attributes is the value of the envelope's "Attributes" key; nil
	// when the key is missing.
	Attributes *Span
}

// parsed is a scanned document with its form and envelope keys.
type parsed struct {
	doc      *Document
	idx      *flatIndex
	form     form
	envelope []keySpan // the envelope's keys (root's or model's)
	envPath  string    // "$" or "$.model"
	env      *Envelope // nil for a bare tree
}

func parse(doc *Document) (*parsed, error) {
	idx, err := scan(doc)
	if err != nil {
		return nil, err
	}
	p := &parsed{doc: doc, idx: idx, envPath: "$"}
	if idx.rootKind != '{' {
		return p, nil
	}
	if n := len(idx.objects); n > 0 && idx.objects[n-1].encl == -1 && isRoot(doc.Data, int(idx.objects[n-1].Start)) {
		if len(idx.subs) > 0 {
			// A model object whose "Objects" key was read apart: its
			// tree needs every object in one index.
			if idx, err = scanWith(doc, false); err != nil {
				return nil, err
			}
			p.idx = idx
		}
		return p, nil // the root is an object of the model
	}
	has := func(keys []keySpan, k string) (keySpan, bool) {
		for _, ks := range keys {
			if ks.key == k {
				return ks, true
			}
		}
		return keySpan{}, false
	}
	_, o := has(idx.rootKeys, "Objects")
	_, oc := has(idx.rootKeys, "ObjectsCopy")
	_, at := has(idx.rootKeys, "Attributes")
	switch {
	case o || oc:
		p.form, p.envelope = formEnvelope, idx.rootKeys
		p.env = &Envelope{Span: Span{jsonedit.WS(doc.Data, 0), rootEnd(doc.Data)}}
	case at:
		return nil, &ModelError{File: doc.Name, Path: "$", Msg: `an envelope needs "Objects" or "ObjectsCopy" (either may be null); found only "Attributes"`}
	default:
		m, ok := has(idx.rootKeys, "model")
		if !ok || doc.Data[m.start] != '{' {
			return p, nil // a plain root: a bare tree
		}
		_, o = has(idx.taskKeys, "Objects")
		_, oc = has(idx.taskKeys, "ObjectsCopy")
		if !o && !oc {
			return nil, &ModelError{File: doc.Name, Path: "$.model", Msg: `an engine task's model must be an envelope with "Objects" or "ObjectsCopy"`}
		}
		p.form, p.envelope, p.envPath = formTask, idx.taskKeys, "$.model"
		p.env = &Envelope{Span: Span{int(m.start), int(m.end)}, Task: true}
	}
	if a, ok := p.key("Attributes"); ok {
		// Murano's engine iterates the rows of Attributes: anything but an
		// array (or null, read as none) is a model it cannot load, and the
		// write-back could not drop the rows of destroyed objects from it.
		if c := doc.Data[a.start]; c != '[' && c != 'n' {
			return nil, &ModelError{File: doc.Name, Path: p.envPath + ".Attributes", Msg: "Attributes must be an array of [objectId, key, value] rows or null; found " + jsonKind(c)}
		}
		p.env.Attributes = &Span{int(a.start), int(a.end)}
	}
	return p, nil
}

// jsonKind names the kind of the JSON value that starts with c.
func jsonKind(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// rootEnd returns the end of the document's root value: the length of
// data without trailing white space.
func rootEnd(data []byte) int {
	end := len(data)
	for end > 0 {
		switch data[end-1] {
		case ' ', '\t', '\n', '\r':
			end--
			continue
		}
		break
	}
	return end
}

// isRoot reports whether off is the offset of the document's root value.
func isRoot(data []byte, off int) bool {
	return jsonedit.WS(data, 0) == off
}

func (p *parsed) key(k string) (keySpan, bool) {
	for _, ks := range p.envelope {
		if ks.key == k {
			return ks, true
		}
	}
	return keySpan{}, false
}

// tree builds the index of the tree data[start:end] at path.
func (p *parsed) tree(path string, start, end int) (*Tree, error) {
	data := p.doc.Data
	t := &Tree{Doc: p.doc, Path: path, Start: start, End: end, Envelope: p.env}
	switch data[start] {
	case 'n':
		t.Null = true
		t.finish(0, nil, nil)
		return t, nil
	case '{', '[':
	default:
		return nil, &ModelError{File: p.doc.Name, Path: path, Msg: "expected an object tree (a JSON object or array) or null"}
	}
	idx := p.idx
	for _, sub := range p.idx.subs {
		if sub.start == start && sub.end == end {
			idx = sub.idx // the tree was scanned apart
		}
	}
	t.segs, t.keySegs, t.ids, t.ext, t.legacies = idx.segs, idx.keySegs, idx.ids, idx.ext, idx.legacies
	t.farHeaders = idx.farHeaders
	t.extTypes = make([]Type, len(t.ext))
	for k, v := range t.ext {
		t.extTypes[k], _ = ParseType(v)
	}
	objs := idx.objects
	lo := sort.Search(len(objs), func(i int) bool { return int(objs[i].End) > start })
	hi := sort.Search(len(objs), func(i int) bool { return int(objs[i].End) > end })
	t.Objects = objs[lo:hi:hi]
	t.segEnd = int32(len(idx.segs))
	if hi < len(objs) {
		t.segEnd = objs[hi].segLo
	}
	strs := idx.strs
	slo := sort.Search(len(strs), func(i int) bool { return int(strs[i].off) >= start })
	shi := sort.Search(len(strs), func(i int) bool { return int(strs[i].off) >= end })
	t.strs = strs[slo:shi:shi]
	p.doc.reading()
	defer p.doc.leaving()
	t.finish(lo, idx.deps, idx.exts)
	return t, nil
}

func (p *parsed) bare() (*Tree, error) {
	start := jsonedit.WS(p.doc.Data, 0)
	return p.tree("$", start, len(p.doc.Data))
}

func (p *parsed) envelopeTree(k string) (*Tree, bool, error) {
	ks, ok := p.key(k)
	if !ok {
		return nil, false, nil
	}
	t, err := p.tree(p.envPath+"."+k, int(ks.start), int(ks.end))
	return t, true, err
}

// treeOrEmpty is envelopeTree, or for a missing key an empty tree (no
// objects) in the envelope.
func (p *parsed) treeOrEmpty(k string) (*Tree, error) {
	t, ok, err := p.envelopeTree(k)
	if !ok && err == nil {
		t = emptyTree(p.doc, p.envPath+"."+k)
		t.Envelope = p.env
	}
	return t, err
}

// emptyTree is the tree of a missing key: no objects.
func emptyTree(doc *Document, path string) *Tree {
	t := &Tree{Doc: doc, Path: path, Null: true}
	t.finish(0, nil, nil)
	return t
}

// isSavedPlan reports whether a root object with keys is a JSON plan (its
// "format_version" and "groups", docs/plan-format.md) rather than a model.
func isSavedPlan(keys []keySpan) bool {
	var version, groups bool
	for _, k := range keys {
		version = version || k.key == "format_version"
		groups = groups || k.key == "groups"
	}
	return version && groups
}

// LoadModel reads a model file in Murano's own form, an envelope
// {"Objects": incoming|null, "ObjectsCopy": snapshot|null, "Attributes":
// [...]} or an engine task {"model": envelope}, and returns the snapshot
// (ObjectsCopy) and the incoming model (Objects). A missing ObjectsCopy is
// an empty snapshot (a first deployment); Objects null means the whole
// environment is deleted. Errors are *SyntaxError or *ModelError, or a
// *ChangedError for a mapped file truncated while it is read (Guard).
func LoadModel(doc *Document) (snap, incoming *Tree, err error) {
	err = Guard(func() error {
		p, err := parse(doc)
		if err != nil {
			return err
		}
		if p.form == formBare && isSavedPlan(p.idx.rootKeys) {
			return &ModelError{File: doc.Name, Path: "$", Msg: "this is a plan saved by objgc plan --out, not a model: to see it, run objgc show " + doc.Name + "; to carry it out, run objgc apply " + doc.Name}
		}
		if p.form == formBare {
			return &ModelError{File: doc.Name, Path: "$", Msg: `expected a Murano envelope {"Objects": ..., "ObjectsCopy": ...} or an engine task {"model": ...}; for two bare object trees use --snapshot and --graph`}
		}
		snap, incoming, err = p.pair()
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return snap, incoming, nil
}

// pair builds the two trees of an envelope, in parallel: each tree's id
// index is a pass over its objects (a quarter of a plan's time on the 1M
// model), and the trees share only what the scan recorded, which they read
// (each writes its own range of the objects array).
func (p *parsed) pair() (snap, incoming *Tree, err error) {
	var snapErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		snapErr = Guard(func() (err error) {
			snap, err = p.treeOrEmpty("ObjectsCopy")
			return err
		})
	}()
	incoming, err = p.treeOrEmpty("Objects")
	<-done
	if err != nil {
		return nil, nil, err // the incoming model's error first, as before
	}
	if snapErr != nil {
		return nil, nil, snapErr
	}
	return snap, incoming, nil
}

// LoadSnapshot reads the snapshot given with --snapshot: a bare object
// tree, or from an envelope or task its ObjectsCopy when the key is
// present, else its Objects.
func LoadSnapshot(doc *Document) (t *Tree, err error) {
	err = Guard(func() error {
		p, err := parse(doc)
		switch {
		case err != nil:
			return err
		case p.form == formBare:
			t, err = p.bare()
			return err
		}
		var ok bool
		if t, ok, err = p.envelopeTree("ObjectsCopy"); ok || err != nil {
			return err
		}
		t, _, err = p.envelopeTree("Objects")
		return err
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// LoadGraph reads the incoming model given with --graph: a bare object tree,
// or from an envelope or task its Objects (missing: no objects).
func LoadGraph(doc *Document) (t *Tree, err error) {
	err = Guard(func() error {
		p, err := parse(doc)
		switch {
		case err != nil:
			return err
		case p.form == formBare:
			t, err = p.bare()
		default:
			t, err = p.treeOrEmpty("Objects")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}
