package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/objgc/objgc/internal/inputfile"
)

// Document is one input held in memory, or for a regular file of 1 MiB
// or more on Linux, mapped read-only from the file (Mapped) until Close.
// The strings a Tree returns (its ids aside) share Data's memory.
type Document struct {
	Name string // the path as given; "-" is shown as <stdin>
	Data []byte // never modified once read

	sumOnce  sync.Once
	sum      string
	sumFault error // what stopped the hash (a *ChangedError)
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

	// m is set when Data is a read-only mapping of the file.
	m *mapping
	// parallelMin is the least size in bytes of an envelope's tree that
	// the reader scans on a goroutine of its own; 0 is
	// defaultParallelMin. Tests set it.
	parallelMin int
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
	if d == nil || d.m == nil || d.Unchanged() {
		return nil
	}
	return &ChangedError{File: d.Name}
}

// view returns a string sharing Data's memory (Data is never modified),
// valid until Close.
func (d *Document) view(start, end int) string {
	if end <= start {
		return ""
	}
	return unsafe.String(&d.Data[start], end-start)
}

// SHA256 returns the hex sha256 of Data, computed once on first use (or
// started by Hash). It panics with a *ChangedError when the file of a
// mapped document was truncated while it was hashed: Protect returns it
// as an error.
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
	err := do(func() error {
		h := sha256.New()
		eachChunk(d.Data, d.m != nil, func(chunk []byte) { h.Write(chunk) })
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
//
// A regular file of 1 MiB or more is mapped read-only rather than read,
// on Linux (Mapped): its pages leave the resident set as they are read,
// and Close unmaps it. A file truncated while it is mapped is a
// *ChangedError from the loaders, and from the work of a goroutine that
// reads the document's bytes under Protect.
func ReadDocument(name string, stdin io.Reader) (*Document, error) {
	return readDocument(name, stdin, mapThreshold)
}

// readDocument is ReadDocument mapping a regular file of mapAt bytes or
// more (tests map every file).
func readDocument(name string, stdin io.Reader, mapAt int64) (*Document, error) {
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
	d, err := readFile(name, st.Size(), mapAt)
	if errors.Is(err, inputfile.ErrNotRegular) {
		return nil, notRegular(err) // swapped for a pipe since the check
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d.Name = name
	if d.file != nil {
		d.startMapping()
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
// mapAt bytes or more is mapped instead. The document keeps the
// file's status taken before the first byte was read (for
// Document.Unchanged).
func readFile(name string, size, mapAt int64) (*Document, error) {
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
	if info.Mode().IsRegular() && info.Size() >= mapAt && info.Size() <= MaxSize {
		if data, err := mapFile(f, info.Size()); err == nil {
			// The hash reads the file (hashFile): it stays open.
			keep = true
			return &Document{Data: data, info: info, file: f}, nil
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
