package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"time"
)

// replayed is a Resume plus what only Open needs.
type replayed struct {
	Resume
	inputs []Input
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
	var h header
	if err := json.Unmarshal(line, &h); err != nil {
		return fmt.Errorf("not a journal header: %w", err)
	}
	if h.Journal != version {
		return fmt.Errorf("journal format %d, this objgc reads format %d", h.Journal, version)
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

// check validates rec against the journal's state. replay is true while
// reading an existing journal: a hook that started without an end may
// start again (the resumed run restarted it). A stateChange's From must
// be filled in.
func (j *Journal) check(rec record, replay bool) error {
	if j.committed {
		return errors.New("record after the commit record")
	}
	switch r := rec.(type) {
	case committingRecord:
		if len(r.Outputs) == 0 {
			return errors.New("committing record without outputs")
		}
		for _, o := range r.Outputs {
			if !filepath.IsAbs(o.Path) || !isSHA256(o.SHA256) {
				return fmt.Errorf("committing record: output %q (sha256 %q): want an absolute path and 64 lower-case hex digits", o.Path, o.SHA256)
			}
		}
		return nil
	case commitRecord:
		return nil // Commit refuses one without outputs
	case stateChange:
		if r.ID == "" {
			return errors.New("state change without an object id")
		}
		if cur := j.state(r.ID); r.From != cur {
			return fmt.Errorf("object %s: state change from %s, but its recorded state is %s", r.ID, r.From, cur)
		}
		if err := transition(r.From, r.To); err != nil {
			err.(*transitionError).ID = r.ID
			return err
		}
		if r.To == stateRemoved && !replay {
			return fmt.Errorf("object %s: state %s is read from old journals, never written", r.ID, r.To)
		}
		return nil
	case hookStart:
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
	case hookEnd:
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
func (j *Journal) apply(seq int64, rec record) {
	j.seq = seq
	switch r := rec.(type) {
	case commitRecord:
		j.committed = true
	case committingRecord:
		j.committing = r.Outputs
	case stateChange:
		j.states[r.ID] = r.To
	case hookStart:
		delete(j.done, r.Key) // a retry after a failure
		j.running[r.Key] = seq
	case hookEnd:
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

// replayError is Open's error for a journal it cannot read back:
// a line that is not a valid record, or a record the journal's rules
// refuse. The journal is left as it is.
type replayError struct {
	Path string // the journal
	Err  error  // why, with the line number
}

func (e *replayError) Error() string {
	return fmt.Sprintf("journal %s cannot be replayed: %v; if no objgc apply is running on its target, "+
		"inspect it (the hooks it records may have changed the world), then move it aside to start over: mv %s %s.old",
		e.Path, e.Err, e.Path, e.Path)
}

func (e *replayError) Unwrap() error { return e.Err }

func sameInputs(a, b []Input) bool {
	return slices.EqualFunc(a, b, func(x, y Input) bool { return x.SHA256 == y.SHA256 })
}

func describeInputs(in []Input) string {
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
