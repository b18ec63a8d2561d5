package destroy

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/objgc/objgc/destroy/journal"
	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/internal/plantest"
)

// cycleModel has two doomed siblings a and b that subscribe to each other:
// a cycle, so they share a group and each is the other's successor.
const cycleSnapshot = `{"?": {"id": "env", "type": "E"},
  "a": {"?": {"id": "a", "type": "T", "dependencies": {"onDestruction": [{"subscriber": "b", "handler": null}]}}},
  "b": {"?": {"id": "b", "type": "T", "dependencies": {"onDestruction": [{"subscriber": "a", "handler": null}]}}}
}`

// applyCycle runs applyPlan on the cycle model with a destroy hook for class
// T that fails for a (exit 3) and, for b, waits until a has failed when
// waitForA is set.
func applyCycle(t *testing.T, parallelism int, waitForA bool) (*order.Plan, *ApplyResult, []byte) {
	t.Helper()
	p := plantest.Plan(t, cycleSnapshot, `{"?": {"id": "env", "type": "E"}}`)
	if len(p.Groups) != 1 || len(p.Groups[0].Objects) != 2 {
		t.Fatalf("groups = %v, want a and b in one group", plantest.GroupIDs(p))
	}
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace")
	wait := ""
	if waitForA {
		wait = `while [ ! -e "$TRACE.a-failed" ]; do sleep 0.01; done`
	}
	script := `#!/bin/sh
echo "start $OBJGC_OBJECT_ID" >> "$TRACE"
if [ "$OBJGC_OBJECT_ID" = a ]; then : > "$TRACE.a-failed"; echo "a fails" >&2; exit 3; fi
` + wait + `
echo "end $OBJGC_OBJECT_ID" >> "$TRACE"
`
	hookDir := filepath.Join(dir, "hooks", "T")
	if err := os.MkdirAll(hookDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hookDir, "destroy"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	j, res, err := journal.Open(journal.PathFor(filepath.Join(dir, "model.json")), testInputs())
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var last Progress
	r, err := applyPlan(context.Background(), p, ApplyOptions{
		Progress:    func(pr Progress) { last = pr },
		Finder:      &HookFinder{Dirs: []string{filepath.Join(dir, "hooks")}},
		Parallelism: parallelism,
		Env:         append(os.Environ(), "TRACE="+trace),
		Journal:     j,
		Resume:      res,
	})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(trace)
	// Every object ends destroyed, failed or blocked; a failed.
	if want := (Progress{Objects: 2, ObjectsDone: 2, Failed: 1, Group: 1, Step: 1, Groups: 1}); last != want {
		t.Errorf("last progress %+v, want %+v", last, want)
	}
	return p, r, out
}

func outcomes(p *order.Plan, r *ApplyResult) map[string]Outcome {
	out := map[string]Outcome{}
	for i, o := range r.Objects {
		out[p.ID(i)] = o.Outcome
	}
	return out
}

// TestApplyFailureInsideACycleGroup: b's edge to a was broken to order
// the cycle, yet a's failure blocks b. When b's hook is already running
// (parallelism 2, b waits for a to fail), b finishes and is destroyed;
// when it has not started (parallelism 1, a first), it is blocked and its
// hook never runs. Run with -race: block and destroy touch b's result
// from two goroutines.
func TestApplyFailureInsideACycleGroup(t *testing.T) {
	t.Run("running", func(t *testing.T) {
		p, r, trace := applyCycle(t, 2, true)
		got := outcomes(p, r)
		if got["a"] != OutcomeFailed || got["b"] != OutcomeDestroyed {
			t.Errorf("outcomes = %v, want a failed, b destroyed (it was running)\ntrace:\n%s", got, trace)
		}
	})
	t.Run("not started", func(t *testing.T) {
		p, r, trace := applyCycle(t, 1, false)
		got := outcomes(p, r)
		first := p.ID(int(p.Groups[0].Objects[0]))
		if first != "a" {
			// The group's order is the document's: a comes first.
			t.Fatalf("group order starts with %s, want a", first)
		}
		if got["a"] != OutcomeFailed || got["b"] != OutcomeBlocked {
			t.Errorf("outcomes = %v, want a failed, b blocked\ntrace:\n%s", got, trace)
		}
		if string(trace) != "start a\n" {
			t.Errorf("trace = %q, want only a's hook", trace)
		}
		for i, o := range r.Objects {
			if p.ID(i) == "b" && (o.BlockedBy < 0 || p.ID(o.BlockedBy) != "a") {
				t.Errorf("b blocked by %d, want a", o.BlockedBy)
			}
		}
	})
}

// TestApplyRunsPreparedHooks: given the hooks the preparation found
// (ApplyOptions.Hooks), applyPlan runs those and looks nothing up again:
// a hook added to the hooks dir since is not run, and a finder that
// would find nothing changes nothing.
func TestApplyRunsPreparedHooks(t *testing.T) {
	p := plantest.Plan(t, cycleSnapshot, `{"?": {"id": "env", "type": "E"}}`)
	dir := t.TempDir()
	hooks := filepath.Join(dir, "hooks")
	trace := filepath.Join(dir, "trace")
	write := func(class, script string) {
		if err := os.MkdirAll(filepath.Join(hooks, class), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(hooks, class, "destroy"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("T", "#!/bin/sh\necho \"planned $OBJGC_OBJECT_ID\" >> \"$TRACE\"\n")
	prep, err := Prepare(context.Background(), p.Diff.Snapshot, p.Diff.Incoming, PrepareOptions{Finder: &HookFinder{Dirs: []string{hooks}}})
	if err != nil {
		t.Fatal(err)
	}
	// A second hook dir's hook for T, there once the plan was prepared:
	// a fresh lookup would run it.
	later := filepath.Join(dir, "later")
	if err := os.MkdirAll(filepath.Join(later, "T"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(later, "T", "destroy"), []byte("#!/bin/sh\necho \"later $OBJGC_OBJECT_ID\" >> \"$TRACE\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	j, res, err := journal.Open(journal.PathFor(filepath.Join(dir, "model.json")), testInputs())
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	r, err := applyPlan(context.Background(), p, ApplyOptions{
		Finder:  &HookFinder{Dirs: []string{later, hooks}},
		Hooks:   prep.Hooks,
		Env:     append(os.Environ(), "TRACE="+trace),
		Journal: j,
		Resume:  res,
	})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(trace)
	if got := string(out); got != "planned a\nplanned b\n" && got != "planned b\nplanned a\n" {
		t.Errorf("hooks run:\n%s\nwant the prepared hook for a and b, and no other", got)
	}
	for i, o := range r.Objects {
		if o.Outcome != OutcomeDestroyed {
			t.Errorf("%s: %v", p.ID(i), o.Outcome)
		}
	}
}
