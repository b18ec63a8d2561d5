// Package journal is apply's journal (docs/journal.md): <target>.journal,
// one JSON line a record, appended as a run changes the state of its
// objects and runs their hooks, so that a run that stops is resumed
// without running a finished hook again. codec.go turns records into lines
// and back, replay.go and lifecycle.go hold the rules a journal is read
// back and written by, groupcommit.go makes records durable with shared
// fsyncs, commit.go recognises a run that finished its write-back.
package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/objgc/objgc/internal/atomicfile"
	"github.com/objgc/objgc/internal/lockfile"
)

// ErrOtherInputs is wrapped by Open's error when the journal
// belongs to a run on other inputs. The journal is left alone.
var ErrOtherInputs = errors.New("journal belongs to a run on other inputs")

// PathFor is where apply keeps the journal of target: <target>.journal.
func PathFor(target string) string { return target + ".journal" }

// Input is one input of a run: the file as given and the sha256
// (lower-case hex) of its bytes.
type Input struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
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

// Resume is what Open found in an existing journal for the same
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
	// notification's patch); the journal refuses to start it. One that failed
	// may be retried (a new start record takes it out of Done), as when a
	// resumed run dooms its failed object again.
	Done map[HookKey]HookResult
	// Unfinished lists the hooks that started without an end record, in
	// the order they started: they run again (hooks are idempotent).
	Unfinished []HookKey
	// Notes says what Open repaired or replaced, for the log.
	Notes []string
}

// Journal is the apply journal (docs/design.md, "Lock, journal and resume"):
// JSON lines, append-only. A record is written to the file (and survives the
// death of this process) before the call that adds it returns, except state
// changes, which are kept in memory until the next record of another kind,
// Sync or Close (write says why that is safe). A record is durable (survives
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
	committing []Input

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

// Open opens the journal at path (PathFor(target)) for a run
// on inputs, creating it or resuming it. The caller must hold the
// target's lock (<target>.lock, which destroy.Run takes first).
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
//   - Any other journal: an error wrapping ErrOtherInputs that names the
//     file. Its hooks may have changed the world without the model saying
//     so; the user checks and deletes it (docs/journal.md).
func Open(path string, inputs []Input) (*Journal, *Resume, error) {
	if len(inputs) == 0 {
		return nil, nil, fmt.Errorf("journal %s: no inputs", path)
	}
	for _, in := range inputs {
		if !isSHA256(in.SHA256) {
			return nil, nil, fmt.Errorf("journal %s: input %s: sha256 %q is not 64 lower-case hex digits", path, in.Path, in.SHA256)
		}
	}
	f, err := lockfile.Open("journal", path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return create(path, inputs, nil)
	}
	if err != nil {
		return nil, nil, err
	}
	j := newJournal(path)
	res, end, torn, err := j.replay(f)
	if err != nil {
		f.Close()
		return nil, nil, &replayError{Path: path, Err: err}
	}
	if !j.committed && j.committing != nil && landed(j.committing, inputs) {
		j.committed = true
	}
	if j.committed {
		f.Close()
		note := fmt.Sprintf("journal %s: replaced the journal of a run started %s by pid %d that had completed its write-back",
			path, res.Started.Format(time.RFC3339), res.PID)
		return create(path, inputs, []string{note})
	}
	if !sameInputs(res.inputs, inputs) {
		f.Close()
		return nil, nil, fmt.Errorf("journal %s is of a run started %s by pid %d on %s, not on %s: %w; "+
			"if no objgc apply is running, that run stopped before its write-back: see docs/journal.md before deleting %s",
			path, res.Started.Format(time.RFC3339), res.PID, describeInputs(res.inputs), describeInputs(inputs), ErrOtherInputs, path)
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

// create writes a new journal holding only its header and renames
// it over path, so that a journal on disk always has a complete header.
func create(path string, inputs []Input, notes []string) (_ *Journal, _ *Resume, err error) {
	now := time.Now()
	line, err := json.Marshal(header{
		Journal: version,
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

// Path returns the journal's file name.
func (j *Journal) Path() string { return j.path }

// State returns the object's last recorded state; alive when it has none.
func (j *Journal) State(id string) State {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state(id)
}

// SetState writes a state change of the object from its last recorded
// state to to (write: no fsync of its own; a dependent step Syncs).
func (j *Journal) SetState(id string, to State) error {
	_, err := j.write(stateChange{ID: id, To: to})
	return err
}

// HookStarted writes that a hook run starts; call it before the hook is
// started. It is not synced: a hook with no durable end record runs again
// on resume whether or not its start record survived (docs/journal.md).
func (j *Journal) HookStarted(k HookKey) error {
	_, err := j.write(hookStart{Key: k})
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
	seq, err := j.write(hookEnd{Key: k, Result: res})
	if err == nil {
		j.flushSoon()
	}
	return seq, err
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
