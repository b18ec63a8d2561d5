package journal

import "fmt"

// State is where a doomed object is in its lifecycle (docs/design.md, "Lock,
// journal and resume"). The apply journal records every change of state;
// transition says which changes are legal.
type State string

// The lifecycle states. An object is alive until a run finds it doomed; it
// never becomes alive again.
const (
	// StateAlive: the object exists in the model. Every object starts here,
	// and an object the journal has no record of is alive.
	StateAlive State = "alive"
	// StateDoomed: the object is in the snapshot and not in the incoming
	// model; this run destroys it.
	StateDoomed State = "doomed"
	// StateNotified: every subscriber's handler for the object's destruction
	// has run (or failed: a failed notification is a warning). An object
	// whose onDestruction list has no handler to notify passes through this
	// state too, so that "notified" always means "all notifications for
	// this publisher are over".
	StateNotified State = "notified"
	// StateDestroying: the object's destroy hooks are running.
	StateDestroying State = "destroying"
	// StateDestroyed: every destroy hook succeeded (or --force overrode a
	// failure); the object is flagged destroyed in the output.
	StateDestroyed State = "destroyed"
	// stateRemoved is read, never written: no objgc run records it (a
	// destroyed object's place in the output is the write-back's
	// business, not the journal's), but the journal API of earlier
	// builds accepted destroyed -> removed, so a journal holding it still
	// replays. write refuses it.
	stateRemoved State = "removed"
	// StateFailed: a destroy hook failed. The object stays in ObjectsCopy
	// and the next run dooms it again.
	StateFailed State = "failed"
)

// transitions is the table of the journal's states (docs/design.md, "Lock,
// journal and resume"):
//
//	alive -> doomed -> notified -> destroying -> destroyed
//	destroying -> failed -> doomed (the next run)
//
// and, read from an old journal only, destroyed -> removed.
//
// There is deliberately no doomed -> destroying shortcut for an object
// with no handler to notify: it is recorded as notified, so that a resumed
// run can tell "notifications over" from "notifications not started"
// without looking at the plan. Nor is there failed -> destroyed: --force
// records destroying -> destroyed (the hook's end record keeps the
// failure).
var transitions = map[State][]State{
	StateAlive:      {StateDoomed},
	StateDoomed:     {StateNotified},
	StateNotified:   {StateDestroying},
	StateDestroying: {StateDestroyed, StateFailed},
	StateDestroyed:  {stateRemoved},
	StateFailed:     {StateDoomed},
}

// Valid reports whether s is one of the lifecycle states.
func (s State) valid() bool {
	switch s {
	case StateAlive, StateDoomed, StateNotified, StateDestroying,
		StateDestroyed, stateRemoved, StateFailed:
		return true
	}
	return false
}

// transitionError is an illegal change of state: a move that is not in the
// lifecycle table, or a state that does not exist.
type transitionError struct {
	ID       string // the object's id; "" when transition was called alone
	From, To State
}

func (e *transitionError) Error() string {
	var what string
	switch {
	case !e.From.valid():
		what = fmt.Sprintf("unknown state %q", e.From)
	case !e.To.valid():
		what = fmt.Sprintf("unknown state %q", e.To)
	default:
		what = fmt.Sprintf("illegal state transition %s -> %s", e.From, e.To)
	}
	if e.ID != "" {
		return "object " + e.ID + ": " + what
	}
	return what
}

// transition returns nil when an object may go from one state to the
// other, and a *transitionError otherwise (including from == to, unknown
// states, and any move back to alive).
func transition(from, to State) error {
	for _, s := range transitions[from] {
		if s == to {
			return nil
		}
	}
	return &transitionError{From: from, To: to}
}
