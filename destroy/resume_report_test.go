package destroy

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/destroy/journal"
	"github.com/objgc/objgc/internal/plantest"
)

// TestApplyReportsHooksOfAResumedObject: a run destroyed object a (its
// hook ran, the journal says destroyed) and crashed before the write-back.
// The resumed run does not run the hook again, and reports it for a,
// marked resumed, instead of no hook at all; when the hook had failed and
// --force counted a destroyed, a is reported with that failure (forced).
func TestApplyReportsHooksOfAResumedObject(t *testing.T) {
	for _, ok := range []bool{true, false} {
		t.Run(map[bool]string{true: "succeeded", false: "forced"}[ok], func(t *testing.T) { testResumedHooks(t, ok) })
	}
}

func testResumedHooks(t *testing.T, hookOK bool) {
	p := plantest.Plan(t, `{"?": {"id": "env", "type": "E"}, "a": {"?": {"id": "a", "type": "T"}}}`, `{"?": {"id": "env", "type": "E"}}`)
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace")
	hookPath := filepath.Join(dir, "hooks", "T", "destroy")
	if err := os.MkdirAll(filepath.Dir(hookPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hookPath, []byte("#!/bin/sh\necho \"$OBJGC_OBJECT_ID\" >> \"$TRACE\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	journalPath := journal.PathFor(filepath.Join(dir, "model.json"))

	// The crashed run, as its journal tells it.
	j, _, err := journal.Open(journalPath, testInputs())
	if err != nil {
		t.Fatal(err)
	}
	key := journal.HookKey{Hook: hookPath, Event: hook.EventDestroy, ID: "a"}
	for _, step := range []func() error{
		func() error { return j.SetState("a", journal.StateDoomed) },
		func() error { return j.SetState("a", journal.StateNotified) },
		func() error { return j.SetState("a", journal.StateDestroying) },
		func() error { return j.HookStarted(key) },
		func() error {
			return hookEnded(j, key, journal.HookResult{OK: hookOK, Exit: map[bool]int{true: 0, false: 3}[hookOK]})
		},
		func() error { return j.SetState("a", journal.StateDestroyed) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	j, resume, err := journal.Open(journalPath, testInputs())
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if !resume.Resumed {
		t.Fatal("the journal was not resumed")
	}
	r, err := applyPlan(context.Background(), p, ApplyOptions{
		Finder:  &HookFinder{Dirs: []string{filepath.Join(dir, "hooks")}},
		Env:     append(os.Environ(), "TRACE="+trace),
		Journal: j,
		Resume:  resume,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(trace); !os.IsNotExist(err) {
		t.Errorf("the hook ran again (trace: %v)", err)
	}
	got := r.Objects[0]
	if got.Outcome != OutcomeDestroyed {
		t.Fatalf("outcome %s, want destroyed", got.Outcome)
	}
	if len(got.Hooks) != 1 || got.Hooks[0].Hook != hookPath || !got.Hooks[0].Resumed || got.Hooks[0].Event != hook.EventDestroy || got.Hooks[0].Class != "T" {
		t.Errorf("hooks %+v, want the crashed run's hook, resumed", got.Hooks)
	}
	switch {
	case hookOK && got.Err != nil:
		t.Errorf("error %v, want none", got.Err)
	case !hookOK && (got.Err == nil || got.Hooks[0].ExitCode != 3 || got.Hooks[0].Error == ""):
		t.Errorf("error %v, hooks %+v: want the earlier failure, exit 3", got.Err, got.Hooks)
	}
}
