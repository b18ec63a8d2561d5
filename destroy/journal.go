package destroy

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/objgc/objgc/internal/atomicfile"
	"github.com/objgc/objgc/internal/inputfile"
)

// JournalVersion is the "journal" value of the header line this code
// writes and reads.
const JournalVersion = 1

// Phase is the "phase" of a hook record: whether it starts or ends a
// hook run.
type Phase string

// Hook record phases.
const (
	PhaseStart Phase = "start"
	PhaseEnd   Phase = "end"
)

// ErrJournalInputs is wrapped by OpenJournal's error when the journal
// belongs to a run on other inputs. The journal is left alone.
var ErrJournalInputs = errors.New("journal belongs to a run on other inputs")

// JournalPath is where apply keeps the journal of target: <target>.journal.
func JournalPath(target string) string { return target + ".journal" }

// JournalInput is one input of a run: the file as given and the sha256
// (lower-case hex) of its bytes.
type JournalInput struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// journalHeader is the first line of a journal.
type journalHeader struct {
	Journal int            `json:"journal"`
	Inputs  []JournalInput `json:"inputs"`
	Started string         `json:"started"` // RFC 3339
	PID     int            `json:"pid"`
}

// HookKey names one run of a hook: the same key in a resumed run is the
// same hook run.
type HookKey struct {
	Hook       string // the hook's path
	Event      string // "destroy" or the handler's name
	ID         string // the object (for a notification, the publisher)
	Subscriber string // notifications only
}

// HookResult is what an end record says about a hook run.
type HookResult struct {
	OK    bool
	Exit  int             // the exit status; -1 when none was recorded
	Patch json.RawMessage // a notification's patch, nil when none
}

// Resume is what OpenJournal found in an existing journal for the same
// inputs. For a new journal, Resumed is false and the maps are empty.
type Resume struct {
	Resumed bool
	Started time.Time // when the journal's first run started
	PID     int       // that run's process id
	// States holds every object with a state record: its last state.
	// Objects not in it are alive.
	States map[string]State
	// Done holds the hooks with an end record, and their result. One that
	// succeeded is never run again: a resumed run reuses its result (and a
	// notification's patch); Append refuses to start it. One that failed
	// may be retried (a new start record takes it out of Done), as when a
	// resumed run dooms its failed object again.
	Done map[HookKey]HookResult
	// Unfinished lists the hooks that started without an end record, in
	// the order they started: they run again (hooks are idempotent).
	Unfinished []HookKey
	// Notes says what OpenJournal repaired or replaced, for the log.
	Notes []string
}

// Journal is the apply journal (docs/design.md, "Lock, journal and resume"):
// JSON lines, append-only. A record is written to the file (and survives the
// death of this process) before the call that adds it returns, except state
// changes, which are kept in memory until the next record of another kind,
// Sync or Close (Write says why that is safe). A record is durable (survives
// a crash of the machine) once an fsync covers it. Fsyncs are shared (group
// commit): Sync waits for one fsync that covers every record written before
// it began, and callers that sync while an fsync is running wait for the
// next one, which covers all of them. Which records are synced when is
// docs/journal.md's argument. Its methods are safe for concurrent use.
type Journal struct {
	path string

	mu        sync.Mutex
	cond      *sync.Cond // on mu: an fsync ended
	f         *os.File
	err       error  // sticky: after a failed write or fsync the file is in doubt
	seq       int64  // records written: 1..seq
	buf       []byte // records seq-len(pending)+1..seq, not yet written to f
	pending   int64  // how many records buf holds
	synced    int64  // records known durable: 1..synced
	syncing   bool   // an fsync is running (outside mu)
	states    map[string]State
	running   map[HookKey]int64 // started, no end yet: seq of the start
	here      map[HookKey]bool  // started by this process
	done      map[HookKey]HookResult
	committed bool
	// committing holds the outputs of the last committing record, nil
	// when none.
	committing []JournalInput

	// fsync makes the file durable; f.Sync but for tests.
	fsync func(*os.File) error
	// kick wakes the flusher, which fsyncs in the background what was
	// written (hook end records); stop ends it; flushed is closed when it
	// has.
	kick     chan struct{}
	stop     chan struct{}
	flushed  chan struct{}
	stopOnce sync.Once
}

// OpenJournal opens the journal at path (JournalPath(target)) for a run
// on inputs, creating it or resuming it. The caller must hold the
// target's lock (LockTarget).
//
//   - No journal: a new one is created atomically (header written to a
//     temporary file, fsynced, renamed into place).
//   - A journal whose inputs have the same sha256s, in the same order
//     (paths may differ): it is resumed. A torn last line (a crash while it
//     was written) is cut off, with a note; any other line that is not a
//     valid record is an error naming the file and line.
//   - A journal holding a commit record, or whose last committing record's
//     outputs hold the content it names (the run died between renaming its
//     write-back into place and the commit record): the run it belongs to
//     completed its write-back, so it is replaced, with a note.
//   - Any other journal: an error wrapping ErrJournalInputs that names the
//     file. Its hooks may have changed the world without the model saying
//     so; the user checks and deletes it (docs/journal.md).
func OpenJournal(path string, inputs []JournalInput) (*Journal, *Resume, error) {
	if len(inputs) == 0 {
		return nil, nil, fmt.Errorf("journal %s: no inputs", path)
	}
	for _, in := range inputs {
		if !isSHA256(in.SHA256) {
			return nil, nil, fmt.Errorf("journal %s: input %s: sha256 %q is not 64 lower-case hex digits", path, in.Path, in.SHA256)
		}
	}
	f, err := openRegular("journal", path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return createJournal(path, inputs, nil)
	}
	if err != nil {
		return nil, nil, err
	}
	j := newJournal(path)
	res, end, torn, err := j.replay(f)
	if err != nil {
		f.Close()
		return nil, nil, &ReplayError{Path: path, Err: err}
	}
	if !j.committed && j.committing != nil && landed(j.committing, inputs) {
		j.committed = true
	}
	if j.committed {
		f.Close()
		note := fmt.Sprintf("journal %s: replaced the journal of a run started %s by pid %d that had completed its write-back",
			path, res.Started.Format(time.RFC3339), res.PID)
		return createJournal(path, inputs, []string{note})
	}
	if !sameInputs(res.inputs, inputs) {
		f.Close()
		return nil, nil, fmt.Errorf("journal %s is of a run started %s by pid %d on %s, not on %s: %w; "+
			"if no objgc apply is running, that run stopped before its write-back: see docs/journal.md before deleting %s",
			path, res.Started.Format(time.RFC3339), res.PID, describeInputs(res.inputs), describeInputs(inputs), ErrJournalInputs, path)
	}
	if torn > 0 {
		if err := f.Truncate(end); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("journal %s: cutting off the torn last line: %w", path, err)
		}
		res.Notes = append(res.Notes, fmt.Sprintf("journal %s: ignored a torn last line (%d bytes after record %d): the previous run stopped while writing it",
			path, torn, j.seq))
	}
	// The records read may still be only in the page cache (the run that
	// wrote them was killed between two fsyncs). This run acts on them
	// (a hook they say succeeded is not run again, and what comes after
	// it starts), so they must be durable first.
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("journal %s: fsync: %w", path, err)
	}
	j.synced = j.seq
	j.start(f)
	return j, &res.Resume, nil
}

func newJournal(path string) *Journal {
	j := &Journal{
		path:    path,
		states:  map[string]State{},
		running: map[HookKey]int64{},
		here:    map[HookKey]bool{},
		done:    map[HookKey]HookResult{},
		fsync:   (*os.File).Sync,
	}
	j.cond = sync.NewCond(&j.mu)
	return j
}

// start makes f the journal's file and starts the flusher.
func (j *Journal) start(f *os.File) {
	j.f = f
	j.kick = make(chan struct{}, 1)
	j.stop = make(chan struct{})
	j.flushed = make(chan struct{})
	go j.flusher()
}

// flusher fsyncs, each time it is kicked, every record written so far:
// hook end records become durable soon after they are written, in one
// fsync for all the hooks that ended meanwhile, without their callers
// waiting for it.
func (j *Journal) flusher() {
	defer close(j.flushed)
	for {
		select {
		case <-j.stop:
			return
		case <-j.kick:
			j.Sync(j.Written()) // a failure is sticky: the next call sees it
		}
	}
}

// createJournal writes a new journal holding only its header and renames
// it over path, so that a journal on disk always has a complete header.
func createJournal(path string, inputs []JournalInput, notes []string) (_ *Journal, _ *Resume, err error) {
	now := time.Now()
	line, err := json.Marshal(journalHeader{
		Journal: JournalVersion,
		Inputs:  inputs,
		Started: now.UTC().Format(time.RFC3339),
		PID:     os.Getpid(),
	})
	if err != nil {
		return nil, nil, err
	}
	f, err := atomicfile.WriteOpen(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(append(line, '\n'))
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("creating journal: %w", err)
	}
	// The descriptor refers to the renamed file, its offset is after the
	// header, and this process is the only writer (it holds the lock):
	// records go on from there. Opening the path again could open
	// whatever was put there since.
	j := newJournal(path)
	j.start(f)
	return j, &Resume{
		Started: now.Truncate(time.Second),
		PID:     os.Getpid(),
		States:  map[string]State{},
		Done:    map[HookKey]HookResult{},
		Notes:   notes,
	}, nil
}

// replayed is a Resume plus what only OpenJournal needs.
type replayed struct {
	Resume
	inputs []JournalInput
}

// replay reads the journal from r into j. end is the offset just after the
// last complete line; torn the length of an unterminated fragment after
// it (0 when none).
func (j *Journal) replay(r io.Reader) (res replayed, end, torn int64, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return res, 0, 0, fmt.Errorf("reading: %w", rerr)
		}
		if rerr == io.EOF {
			if len(line) > 0 && n == 1 {
				return res, 0, 0, errors.New("line 1: no complete header line")
			}
			torn = int64(len(line))
			break
		}
		if n == 1 {
			if err := parseHeader(line, &res); err != nil {
				return res, 0, 0, fmt.Errorf("line 1: %w", err)
			}
		} else {
			seq, rec, err := decodeRecord(bytes.TrimSuffix(line, []byte{'\n'}))
			if err != nil {
				return res, 0, 0, fmt.Errorf("line %d: %w", n, err)
			}
			if seq != j.seq+1 {
				return res, 0, 0, fmt.Errorf("line %d: seq %d after %d", n, seq, j.seq)
			}
			if err := j.check(rec, true); err != nil {
				return res, 0, 0, fmt.Errorf("line %d: seq %d: %w", n, seq, err)
			}
			j.apply(seq, rec)
		}
		end += int64(len(line))
	}
	if end == 0 {
		return res, 0, 0, errors.New("it is empty: no header line")
	}
	res.Resumed = true
	res.States = maps.Clone(j.states)
	res.Done = maps.Clone(j.done)
	for k := range j.running {
		res.Unfinished = append(res.Unfinished, k)
	}
	slices.SortFunc(res.Unfinished, func(a, b HookKey) int { return int(j.running[a] - j.running[b]) })
	return res, end, torn, nil
}

func parseHeader(line []byte, res *replayed) error {
	var h journalHeader
	if err := json.Unmarshal(line, &h); err != nil {
		return fmt.Errorf("not a journal header: %w", err)
	}
	if h.Journal != JournalVersion {
		return fmt.Errorf("journal format %d, this objgc reads format %d", h.Journal, JournalVersion)
	}
	t, err := time.Parse(time.RFC3339, h.Started)
	if err != nil {
		return fmt.Errorf("header: started: %w", err)
	}
	if len(h.Inputs) == 0 {
		return errors.New("header: no inputs")
	}
	res.Started, res.PID, res.inputs = t, h.PID, h.Inputs
	return nil
}

func strictUnmarshal(line []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// check validates rec against the journal's state. replay is true while
// reading an existing journal: a hook that started without an end may
// start again (the resumed run restarted it). A StateChange's From must
// be filled in.
func (j *Journal) check(rec Record, replay bool) error {
	if j.committed {
		return errors.New("record after the commit record")
	}
	switch r := rec.(type) {
	case CommittingRecord:
		if len(r.Outputs) == 0 {
			return errors.New("committing record without outputs")
		}
		for _, o := range r.Outputs {
			if !filepath.IsAbs(o.Path) || !isSHA256(o.SHA256) {
				return fmt.Errorf("committing record: output %q (sha256 %q): want an absolute path and 64 lower-case hex digits", o.Path, o.SHA256)
			}
		}
		return nil
	case CommitRecord:
		return nil // Commit refuses one without outputs
	case StateChange:
		if r.ID == "" {
			return errors.New("state change without an object id")
		}
		if cur := j.state(r.ID); r.From != cur {
			return fmt.Errorf("object %s: state change from %s, but its recorded state is %s", r.ID, r.From, cur)
		}
		if err := Transition(r.From, r.To); err != nil {
			err.(*TransitionError).ID = r.ID
			return err
		}
		return nil
	case HookStart:
		k := r.Key
		if err := checkHookKey(k); err != nil {
			return err
		}
		// A hook that succeeded never runs again. One that failed may be
		// retried: the new start record begins a new attempt.
		if res, ok := j.done[k]; ok && res.OK {
			return fmt.Errorf("hook %s %s for %s: already ended successfully", k.Hook, k.Event, k.ID)
		}
		if !replay && j.here[k] {
			return fmt.Errorf("hook %s %s for %s: already started", k.Hook, k.Event, k.ID)
		}
		return nil
	case HookEnd:
		k := r.Key
		if err := checkHookKey(k); err != nil {
			return err
		}
		if _, ok := j.done[k]; ok {
			return fmt.Errorf("hook %s %s for %s: already has an end record", k.Hook, k.Event, k.ID)
		}
		if _, ok := j.running[k]; !ok {
			return fmt.Errorf("hook %s %s for %s: end record without a start record", k.Hook, k.Event, k.ID)
		}
		if r.Result.Patch != nil && !json.Valid(r.Result.Patch) {
			return fmt.Errorf("hook %s %s for %s: patch is not JSON", k.Hook, k.Event, k.ID)
		}
		return nil
	}
	return fmt.Errorf("record of type %T", rec)
}

func checkHookKey(k HookKey) error {
	if k.Hook == "" || k.Event == "" || k.ID == "" {
		return errors.New("hook record without hook, event or object id")
	}
	return nil
}

// apply updates the journal's state with checked record seq.
func (j *Journal) apply(seq int64, rec Record) {
	j.seq = seq
	switch r := rec.(type) {
	case CommitRecord:
		j.committed = true
	case CommittingRecord:
		j.committing = r.Outputs
	case StateChange:
		j.states[r.ID] = r.To
	case HookStart:
		delete(j.done, r.Key) // a retry after a failure
		j.running[r.Key] = seq
	case HookEnd:
		delete(j.running, r.Key)
		delete(j.here, r.Key)
		j.done[r.Key] = r.Result
	}
}

func (j *Journal) state(id string) State {
	if s, ok := j.states[id]; ok {
		return s
	}
	return StateAlive
}

// Path returns the journal's file name.
func (j *Journal) Path() string { return j.path }

// State returns the object's last recorded state; alive when it has none.
func (j *Journal) State(id string) State {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state(id)
}

// Append is Write, then Sync of the record: it returns once the record
// is durable. Concurrent Appends share fsyncs.
func (j *Journal) Append(rec Record) error {
	seq, err := j.Write(rec)
	if err != nil {
		return err
	}
	return j.Sync(seq)
}

// journalBuffer is how many bytes of state changes Write keeps before it
// writes them to the file.
const journalBuffer = 64 << 10

// Write validates rec, gives it the next Seq, adds it to the journal as
// one line and returns its Seq. A hook record (and anything that is not a
// state change) is written to the file with one write(2), together with
// the state changes before it, before Write returns: it survives the death
// of this process from then on. State changes are kept in memory up to
// 64 KiB, until the next such record, Sync or Close: should the process
// die first, they are lost, which is as if it had died before them (no
// hook started after them). A record is durable once a Sync of its Seq,
// or of a later one, returns; a step that depends on it must not start
// before that.
//
// A StateChange must be legal (Transition) from the object's last
// recorded state (alive when none); an empty From is filled in with that
// state. A HookStart is refused for a hook that ended successfully, or
// that this process started and has not ended; a hook that ended in
// failure may start again (a retry). A HookEnd needs a start.
// A refused record is not written, and the error is a *TransitionError for
// an illegal transition. After a failed write or fsync the journal
// refuses every record: the file's content is in doubt.
func (j *Journal) Write(rec Record) (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return 0, j.err
	}
	if j.f == nil {
		return 0, fmt.Errorf("journal %s: closed", j.path)
	}
	sc, isState := rec.(StateChange)
	if isState && sc.From == "" {
		sc.From = j.state(sc.ID)
		rec = sc
	}
	if err := j.check(rec, false); err != nil {
		return 0, fmt.Errorf("journal %s: %w", j.path, err)
	}
	seq := j.seq + 1
	buf, err := appendRecord(j.buf, seq, rec)
	if err != nil {
		return 0, fmt.Errorf("journal %s: %w", j.path, err)
	}
	j.buf = append(buf, '\n')
	j.pending++
	j.apply(seq, rec)
	if r, ok := rec.(HookStart); ok {
		j.here[r.Key] = true
	}
	if !isState || len(j.buf) >= journalBuffer {
		if err := j.flushLocked(); err != nil {
			return 0, err
		}
	}
	return seq, nil
}

// flushLocked writes the buffered records to the file with one write(2).
func (j *Journal) flushLocked() error {
	if j.pending == 0 {
		return j.err
	}
	_, err := j.f.Write(j.buf)
	j.buf, j.pending = j.buf[:0], 0
	if err != nil && j.err == nil {
		j.err = fmt.Errorf("writing journal %s: %w", j.path, err)
	}
	return j.err
}

// Written returns the Seq of the last record written (0 when none).
func (j *Journal) Written() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.seq
}

// Sync returns once every record up to seq is durable: at once when an
// earlier fsync covered them, else after an fsync that began after they
// were written. One caller at a time runs fsync, without the journal's
// lock (records are written meanwhile); the others wait for it and, if
// it began before their record, for the next one, which one of them runs
// for all (group commit). An fsync error is sticky (after a failed fsync
// the kernel may have dropped the dirty pages: the file is in doubt).
func (j *Journal) Sync(seq int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for {
		if j.err != nil {
			return j.err
		}
		if j.synced >= seq {
			return nil
		}
		if j.f == nil {
			return fmt.Errorf("journal %s: closed", j.path)
		}
		if !j.syncing {
			break
		}
		j.cond.Wait()
	}
	if err := j.flushLocked(); err != nil {
		return err
	}
	j.syncing = true
	upto, f := j.seq, j.f
	j.mu.Unlock()
	err := j.fsync(f)
	j.mu.Lock()
	j.syncing = false
	if err != nil {
		if j.err == nil {
			j.err = fmt.Errorf("journal %s: fsync: %w", j.path, err)
		}
	} else if upto > j.synced {
		j.synced = upto
	}
	j.cond.Broadcast()
	return j.err
}

// flushSoon asks the flusher to fsync what was written, without waiting.
func (j *Journal) flushSoon() {
	select {
	case j.kick <- struct{}{}:
	default: // a kick is pending: its fsync will cover this record too
	}
}

// SetState writes a state change of the object from its last recorded
// state to to (Write: no fsync of its own; a dependent step Syncs).
func (j *Journal) SetState(id string, to State) error {
	_, err := j.Write(StateChange{ID: id, To: to})
	return err
}

// HookStarted writes that a hook run starts; call it before the hook is
// started. It is not synced: a hook with no durable end record runs again
// on resume whether or not its start record survived (docs/journal.md).
func (j *Journal) HookStarted(k HookKey) error {
	_, err := j.Write(HookStart{Key: k})
	return err
}

// EndHook writes a hook run's result and returns its Seq. res.Exit < 0
// records no exit status. The flusher fsyncs it soon, together with the
// end records of the other hooks that ended meanwhile; a step that
// depends on the result Syncs the Seq.
func (j *Journal) EndHook(k HookKey, res HookResult) (int64, error) {
	if res.Exit < 0 {
		res.Exit = -1
	}
	seq, err := j.Write(HookEnd{Key: k, Result: res})
	if err == nil {
		j.flushSoon()
	}
	return seq, err
}

// Commit records that the write-back of outputs has been renamed into
// place (and its folder fsynced). Call it before Remove: should Remove not
// happen, the next OpenJournal knows this journal is finished and
// replaces it. No record may follow it. outputs must not be empty.
func (j *Journal) Commit(outputs []JournalInput) error {
	if len(outputs) == 0 {
		return fmt.Errorf("journal %s: commit record without outputs", j.path)
	}
	return j.Append(CommitRecord{Outputs: outputs})
}

// Committing records that outputs (absolute paths, each with the sha256
// of the content about to be renamed over it) are about to be renamed
// into place. Call it after the new content is fsynced and before the
// rename; Commit once the rename is done.
func (j *Journal) Committing(outputs []JournalInput) error {
	if len(outputs) == 0 {
		return fmt.Errorf("journal %s: committing record without outputs", j.path)
	}
	return j.Append(CommittingRecord{Outputs: outputs})
}

// landed reports whether every output holds the content a committing
// record names. An input of this run with the same path and sha256 says
// so without reading the file again.
func landed(outputs, inputs []JournalInput) bool {
	for _, o := range outputs {
		known := false
		for _, in := range inputs {
			if abs, err := filepath.Abs(in.Path); err == nil && abs == o.Path && in.SHA256 == o.SHA256 {
				known = true
			}
		}
		if known {
			continue
		}
		sum, err := fileSHA256(o.Path)
		if err != nil || sum != o.SHA256 {
			return false
		}
	}
	return true
}

// fileSHA256 hashes the file at path, which the journal names; a named
// pipe put there is refused, not waited on (inputfile.Open).
func fileSHA256(path string) (string, error) {
	f, _, err := inputfile.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Close fsyncs what was written and not yet synced, and closes the
// journal file, leaving it on disk for a resumed run. It may be called
// more than once.
func (j *Journal) Close() error {
	if j.stop != nil {
		j.stopOnce.Do(func() { close(j.stop) })
		<-j.flushed
	}
	serr := j.Sync(j.Written())
	if serr != nil && j.isClosed() {
		serr = nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.syncing {
		j.cond.Wait()
	}
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	if err == nil {
		err = serr
	}
	return err
}

func (j *Journal) isClosed() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.f == nil
}

// Remove closes and deletes the journal, then fsyncs its folder. Call it
// once the write-back is committed: the journal's work is then in the
// model.
func (j *Journal) Remove() error {
	cerr := j.Close()
	if err := os.Remove(j.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing journal: %w", err)
	}
	if err := atomicfile.SyncDir(filepath.Dir(j.path)); err != nil {
		return fmt.Errorf("removing journal %s: %w", j.path, err)
	}
	return cerr
}

// Record is one line of the journal after the header. It is one of
//
//   - StateChange: an object's state changes;
//   - HookStart and HookEnd: a hook run starts, and ends with a result;
//   - CommittingRecord: the outputs of a write-back are about to be
//     renamed into place;
//   - CommitRecord: they have been.
//
// The journal numbers the records it writes (Seq 1, 2, 3...): a record
// value carries no Seq. On disk a line carries no kind either (journals
// of format 1 were written before there were types): encodeRecord and
// decodeRecord are the one place that turns records into lines and lines
// into records, telling the kind from the keys a line sets.
type Record interface {
	kind() recordKind
}

// recordKind names a kind of Record, for errors.
type recordKind string

const (
	kindState      recordKind = "state change"
	kindHookStart  recordKind = "hook start record"
	kindHookEnd    recordKind = "hook end record"
	kindCommitting recordKind = "committing record"
	kindCommit     recordKind = "commit record"
)

// StateChange records that object ID went from state From to state To.
// An empty From in Write is filled in with the object's last recorded
// state; a line on disk always has both.
type StateChange struct {
	ID       string
	From, To State
}

// HookStart records that a hook run starts.
type HookStart struct {
	Key HookKey
}

// HookEnd records how a hook run ended: Result.OK, Result.Exit (the exit
// status; -1 when the hook did not exit: killed by a signal, or could not
// start) and Result.Patch (the merge patch a notification printed, nil
// when none).
type HookEnd struct {
	Key    HookKey
	Result HookResult
}

// CommittingRecord records that the outputs of a write-back (absolute
// paths, each with the sha256 of its new content) are about to be renamed
// into place. Should the run die before its CommitRecord, the next
// OpenJournal reads the outputs: if they hold that content, the rename
// happened and the journal is finished.
type CommittingRecord struct {
	Outputs []JournalInput
}

// CommitRecord records that the outputs of a write-back have been renamed
// into place. No record may follow it.
type CommitRecord struct {
	Outputs []JournalInput
}

func (StateChange) kind() recordKind      { return kindState }
func (HookStart) kind() recordKind        { return kindHookStart }
func (HookEnd) kind() recordKind          { return kindHookEnd }
func (CommittingRecord) kind() recordKind { return kindCommitting }
func (CommitRecord) kind() recordKind     { return kindCommit }

// wireRecord is a record line as JSON: the union of the keys of every
// kind, in the order format 1 writes them. Only encodeRecord and
// decodeRecord use it.
type wireRecord struct {
	Seq        int64           `json:"seq"`
	Hook       string          `json:"hook,omitempty"`
	Event      string          `json:"event,omitempty"`
	ID         string          `json:"id,omitempty"`
	Subscriber string          `json:"subscriber,omitempty"`
	From       State           `json:"from,omitempty"`
	To         State           `json:"to,omitempty"`
	Phase      Phase           `json:"phase,omitempty"`
	Exit       *int            `json:"exit,omitempty"`
	OK         *bool           `json:"ok,omitempty"`
	Patch      json.RawMessage `json:"patch,omitempty"`
	Committing []JournalInput  `json:"committing,omitempty"`
	Committed  []JournalInput  `json:"committed,omitempty"`
}

// encodeRecord returns rec as the JSON line (without its newline) of
// record seq.
func encodeRecord(seq int64, rec Record) ([]byte, error) {
	return appendRecord(nil, seq, rec)
}

// appendRecord appends encodeRecord's bytes to b (the journal's buffer:
// no line of its own to allocate and copy, four state changes an object);
// on an error b is returned as it was.
func appendRecord(b []byte, seq int64, rec Record) ([]byte, error) {
	if r, ok := rec.(StateChange); ok && plainJSON(r.ID) && plainJSON(string(r.From)) && plainJSON(string(r.To)) {
		// Four state changes an object: written directly, the bytes
		// json.Marshal writes (TestEncodeStateChange), at a fraction of
		// its cost.
		b = strconv.AppendInt(append(b, `{"seq":`...), seq, 10)
		for _, f := range [3][2]string{{"id", r.ID}, {"from", string(r.From)}, {"to", string(r.To)}} {
			if f[1] != "" {
				b = append(append(append(append(append(b, `,"`...), f[0]...), `":"`...), f[1]...), '"')
			}
		}
		return append(b, '}'), nil
	}
	w := wireRecord{Seq: seq}
	hook := func(k HookKey, p Phase) {
		w.Hook, w.Event, w.ID, w.Subscriber, w.Phase = k.Hook, k.Event, k.ID, k.Subscriber, p
	}
	switch r := rec.(type) {
	case StateChange:
		w.ID, w.From, w.To = r.ID, r.From, r.To
	case HookStart:
		hook(r.Key, PhaseStart)
	case HookEnd:
		hook(r.Key, PhaseEnd)
		ok := r.Result.OK
		w.OK, w.Patch = &ok, r.Result.Patch
		if r.Result.Exit >= 0 {
			exit := r.Result.Exit
			w.Exit = &exit
		}
	case CommittingRecord:
		w.Committing = r.Outputs
	case CommitRecord:
		w.Committed = r.Outputs
	default:
		return b, fmt.Errorf("record of type %T", rec)
	}
	line, err := json.Marshal(&w)
	if err != nil {
		return b, err
	}
	return append(b, line...), nil
}

// plainJSON reports whether json.Marshal writes s as it is between quotes:
// printable ASCII but the quote, the backslash and the characters it
// escapes for HTML (<, >, &).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// decodeRecord reads one record line (without its newline). A line must
// be one JSON object with known keys; its kind follows from the key only
// that kind sets ("to" and "from": a state change; "phase": a hook
// record, "start" or "end"; "committing"; "committed"), and it may set
// no key of another kind. The error for a line of mixed or unknown shape
// names its seq and the keys at fault.
func decodeRecord(line []byte) (int64, Record, error) {
	var w wireRecord
	if err := strictUnmarshal(line, &w); err != nil {
		return 0, nil, fmt.Errorf("not a record: %w", err)
	}
	present := w.keys()
	var kinds []recordKind
	for _, key := range present {
		var k recordKind
		switch key {
		case "from", "to":
			k = kindState
		case "phase":
			k = kindHookStart // or an end: the phase says
		case "committing":
			k = kindCommitting
		case "committed":
			k = kindCommit
		default:
			continue
		}
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	switch {
	case len(kinds) == 0:
		return w.Seq, nil, fmt.Errorf("seq %d: a record of no known kind: it sets none of from and to (a state change), phase (a hook record), committing, committed", w.Seq)
	case len(kinds) > 1:
		return w.Seq, nil, fmt.Errorf("seq %d: a record that mixes the keys of a %s", w.Seq, describeKinds(kinds))
	}
	k := kinds[0]
	if k == kindHookStart {
		switch w.Phase {
		case PhaseStart:
		case PhaseEnd:
			k = kindHookEnd
		default:
			return w.Seq, nil, fmt.Errorf("seq %d: hook record phase %q, want %q or %q", w.Seq, w.Phase, PhaseStart, PhaseEnd)
		}
	}
	var extra []string
	for _, key := range present {
		if !slices.Contains(recordKeys[k], key) {
			extra = append(extra, key)
		}
	}
	if len(extra) > 0 {
		return w.Seq, nil, fmt.Errorf("seq %d: a %s with keys of another kind: %s", w.Seq, k, strings.Join(extra, ", "))
	}
	key := HookKey{Hook: w.Hook, Event: w.Event, ID: w.ID, Subscriber: w.Subscriber}
	switch k {
	case kindState:
		if w.From == "" || w.To == "" {
			return w.Seq, nil, fmt.Errorf("seq %d: object %s: state change without from or to", w.Seq, w.ID)
		}
		return w.Seq, StateChange{ID: w.ID, From: w.From, To: w.To}, nil
	case kindHookStart:
		return w.Seq, HookStart{Key: key}, nil
	case kindHookEnd:
		if w.OK == nil {
			return w.Seq, nil, fmt.Errorf("seq %d: hook %s %s for %s: end record without ok", w.Seq, w.Hook, w.Event, w.ID)
		}
		res := HookResult{OK: *w.OK, Exit: -1, Patch: w.Patch}
		if w.Exit != nil {
			res.Exit = *w.Exit
		}
		return w.Seq, HookEnd{Key: key, Result: res}, nil
	case kindCommitting:
		return w.Seq, CommittingRecord{Outputs: w.Committing}, nil
	default:
		return w.Seq, CommitRecord{Outputs: w.Committed}, nil
	}
}

// recordKeys are the keys (but seq) a record of each kind may set.
var recordKeys = map[recordKind][]string{
	kindState:      {"id", "from", "to"},
	kindHookStart:  {"hook", "event", "id", "subscriber", "phase"},
	kindHookEnd:    {"hook", "event", "id", "subscriber", "phase", "exit", "ok", "patch"},
	kindCommitting: {"committing"},
	kindCommit:     {"committed"},
}

// keys returns the keys (but seq) the line set, in wire order. A key set
// to its zero value (which format 1 never writes) counts as not set.
func (w *wireRecord) keys() []string {
	var out []string
	add := func(key string, set bool) {
		if set {
			out = append(out, key)
		}
	}
	add("hook", w.Hook != "")
	add("event", w.Event != "")
	add("id", w.ID != "")
	add("subscriber", w.Subscriber != "")
	add("from", w.From != "")
	add("to", w.To != "")
	add("phase", w.Phase != "")
	add("exit", w.Exit != nil)
	add("ok", w.OK != nil)
	add("patch", w.Patch != nil)
	add("committing", w.Committing != nil)
	add("committed", w.Committed != nil)
	return out
}

func describeKinds(kinds []recordKind) string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		if k == kindHookStart {
			k = "hook record"
		}
		s[i] = string(k)
	}
	return strings.Join(s, " and a ")
}

// ReplayError is OpenJournal's error for a journal it cannot read back:
// a line that is not a valid record, or a record the journal's rules
// refuse. The journal is left as it is.
type ReplayError struct {
	Path string // the journal
	Err  error  // why, with the line number
}

func (e *ReplayError) Error() string {
	return fmt.Sprintf("journal %s cannot be replayed: %v; if no objgc apply is running on its target, "+
		"inspect it (the hooks it records may have changed the world), then move it aside to start over: mv %s %s.old",
		e.Path, e.Err, e.Path, e.Path)
}

func (e *ReplayError) Unwrap() error { return e.Err }

func sameInputs(a, b []JournalInput) bool {
	return slices.EqualFunc(a, b, func(x, y JournalInput) bool { return x.SHA256 == y.SHA256 })
}

func describeInputs(in []JournalInput) string {
	var b bytes.Buffer
	for i, x := range in {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (sha256 %.12s)", x.Path, x.SHA256)
	}
	return b.String()
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
