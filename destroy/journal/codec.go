package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// version is the "journal" value of the header line this code
// writes and reads.
const version = 1

// phase is the "phase" of a hook record: whether it starts or ends a
// hook run.
type phase string

// Hook record phases.
const (
	phaseStart phase = "start"
	phaseEnd   phase = "end"
)

// header is the first line of a journal.
type header struct {
	Journal int     `json:"journal"`
	Inputs  []Input `json:"inputs"`
	Started string  `json:"started"` // RFC 3339
	PID     int     `json:"pid"`
}

// record is one line of the journal after the header. It is one of
//
//   - stateChange: an object's state changes;
//   - hookStart and hookEnd: a hook run starts, and ends with a result;
//   - committingRecord: the outputs of a write-back are about to be
//     renamed into place;
//   - commitRecord: they have been.
//
// The journal numbers the records it writes (Seq 1, 2, 3...): a record
// value carries no Seq. On disk a line carries no kind either (journals
// of format 1 were written before there were types): encodeRecord and
// decodeRecord are the one place that turns records into lines and lines
// into records, telling the kind from the keys a line sets.
type record interface {
	kind() recordKind
}

// recordKind names a kind of record, for errors.
type recordKind string

const (
	kindState      recordKind = "state change"
	kindHookStart  recordKind = "hook start record"
	kindHookEnd    recordKind = "hook end record"
	kindCommitting recordKind = "committing record"
	kindCommit     recordKind = "commit record"
)

// stateChange records that object ID went from state From to state To.
// An empty From in write is filled in with the object's last recorded
// state; a line on disk always has both.
type stateChange struct {
	ID       string
	From, To State
}

// hookStart records that a hook run starts.
type hookStart struct {
	Key HookKey
}

// hookEnd records how a hook run ended: Result.OK, Result.Exit (the exit
// status; -1 when the hook did not exit: killed by a signal, or could not
// start) and Result.Patch (the merge patch a notification printed, nil
// when none).
type hookEnd struct {
	Key    HookKey
	Result HookResult
}

// committingRecord records that the outputs of a write-back (absolute
// paths, each with the sha256 of its new content) are about to be renamed
// into place. Should the run die before its commitRecord, the next
// Open reads the outputs: if they hold that content, the rename
// happened and the journal is finished.
type committingRecord struct {
	Outputs []Input
}

// commitRecord records that the outputs of a write-back have been renamed
// into place. No record may follow it.
type commitRecord struct {
	Outputs []Input
}

func (stateChange) kind() recordKind      { return kindState }
func (hookStart) kind() recordKind        { return kindHookStart }
func (hookEnd) kind() recordKind          { return kindHookEnd }
func (committingRecord) kind() recordKind { return kindCommitting }
func (commitRecord) kind() recordKind     { return kindCommit }

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
	Phase      phase           `json:"phase,omitempty"`
	Exit       *int            `json:"exit,omitempty"`
	OK         *bool           `json:"ok,omitempty"`
	Patch      json.RawMessage `json:"patch,omitempty"`
	Committing []Input         `json:"committing,omitempty"`
	Committed  []Input         `json:"committed,omitempty"`
}

// encodeRecord returns rec as the JSON line (without its newline) of
// record seq.
func encodeRecord(seq int64, rec record) ([]byte, error) {
	return appendRecord(nil, seq, rec)
}

// appendRecord appends encodeRecord's bytes to b (the journal's buffer:
// no line of its own to allocate and copy, four state changes an object);
// on an error b is returned as it was.
func appendRecord(b []byte, seq int64, rec record) ([]byte, error) {
	if r, ok := rec.(stateChange); ok && plainJSON(r.ID) && plainJSON(string(r.From)) && plainJSON(string(r.To)) {
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
	hook := func(k HookKey, p phase) {
		w.Hook, w.Event, w.ID, w.Subscriber, w.Phase = k.Hook, k.Event, k.ID, k.Subscriber, p
	}
	switch r := rec.(type) {
	case stateChange:
		w.ID, w.From, w.To = r.ID, r.From, r.To
	case hookStart:
		hook(r.Key, phaseStart)
	case hookEnd:
		hook(r.Key, phaseEnd)
		ok := r.Result.OK
		w.OK, w.Patch = &ok, r.Result.Patch
		if r.Result.Exit >= 0 {
			exit := r.Result.Exit
			w.Exit = &exit
		}
	case committingRecord:
		w.Committing = r.Outputs
	case commitRecord:
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
func decodeRecord(line []byte) (int64, record, error) {
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
		case phaseStart:
		case phaseEnd:
			k = kindHookEnd
		default:
			return w.Seq, nil, fmt.Errorf("seq %d: hook record phase %q, want %q or %q", w.Seq, w.Phase, phaseStart, phaseEnd)
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
		return w.Seq, stateChange{ID: w.ID, From: w.From, To: w.To}, nil
	case kindHookStart:
		return w.Seq, hookStart{Key: key}, nil
	case kindHookEnd:
		if w.OK == nil {
			return w.Seq, nil, fmt.Errorf("seq %d: hook %s %s for %s: end record without ok", w.Seq, w.Hook, w.Event, w.ID)
		}
		res := HookResult{OK: *w.OK, Exit: -1, Patch: w.Patch}
		if w.Exit != nil {
			res.Exit = *w.Exit
		}
		return w.Seq, hookEnd{Key: key, Result: res}, nil
	case kindCommitting:
		return w.Seq, committingRecord{Outputs: w.Committing}, nil
	default:
		return w.Seq, commitRecord{Outputs: w.Committed}, nil
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
