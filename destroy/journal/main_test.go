package journal

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// helperEnv makes the test binary a helper process instead of running the
// tests: "journal-append:<path>" (journalAppendHelper). A crash is tested
// by killing a real process that writes the journal.
const helperEnv = "OBJGC_JOURNAL_TEST_HELPER"

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		mode, arg, _ := strings.Cut(h, ":")
		if mode == "journal-append" {
			os.Exit(journalAppendHelper(arg))
		}
		fmt.Fprintf(os.Stderr, "unknown %s mode %q\n", helperEnv, mode)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// HookEnded writes a hook run's result (EndHook without the Seq).
func (j *Journal) HookEnded(k HookKey, res HookResult) error {
	_, err := j.EndHook(k, res)
	return err
}

// States returns every lifecycle state a journal may hold, in lifecycle
// order.
func States() []State {
	return []State{StateAlive, StateDoomed, StateNotified, StateDestroying,
		StateDestroyed, stateRemoved, StateFailed}
}

// within runs f in a goroutine and fails the test if it has not returned
// within d (the test's own bound on a call that must not block; it is not
// a measurement).
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s still blocked after %s", what, d)
	}
}
