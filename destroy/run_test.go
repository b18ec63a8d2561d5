package destroy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/destroy/journal"
	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/destroy/planfile"
	"github.com/objgc/objgc/snapshot"
)

// runSnapshot is the deployment the Run tests destroy: app owns vm, vm
// owns disk (owned objects go first), log subscribes to vm (a publisher
// goes before its subscriber) and other stands alone. The incoming model
// keeps env alone: everything else is doomed.
const runSnapshot = `{"?": {"id": "env", "type": "E"},
  "app": {"?": {"id": "app", "type": "App"},
    "vm": {"?": {"id": "vm", "type": "VM", "dependencies": {"onDestruction": [{"subscriber": "log", "handler": null}]}},
      "disk": {"?": {"id": "disk", "type": "Disk"}}}},
  "log": {"?": {"id": "log", "type": "Log"}},
  "other": {"?": {"id": "other", "type": "Other"}}
}`

// fakeHooks is a HookRunner that runs no process: it records the object
// of each destroy hook it is asked to run, fails those in fail (exit 3),
// stops the run with a non-hook error for crash (as a journal that cannot
// be written would), and closes drain once it ran the object drainAfter
// (the first interrupt).
type fakeHooks struct {
	fail       map[string]bool
	crash      string
	drainAfter string
	drain      chan struct{}

	mu  sync.Mutex
	ran []string
}

func (f *fakeHooks) run(ctx context.Context, inv hook.Invocation) (*hook.Result, error) {
	f.mu.Lock()
	f.ran = append(f.ran, inv.ObjectID)
	f.mu.Unlock()
	if inv.ObjectID == f.drainAfter {
		close(f.drain)
	}
	switch {
	case inv.ObjectID == f.crash:
		return nil, errors.New("the disk is full")
	case f.fail[inv.ObjectID]:
		res := &hook.Result{ExitCode: 3}
		return res, &hook.HookError{Hook: inv.Hook, Event: hook.EventDestroy, ObjectID: inv.ObjectID, ExitCode: 3, Reason: "exit status 3"}
	}
	return &hook.Result{}, nil
}

// runFixture writes the model and a destroy hook for every class of
// runSnapshot (files the finder finds; the fake runner never starts them)
// and returns the model's path and the hooks dir.
func runFixture(t *testing.T) (model, hooks string) {
	t.Helper()
	dir := t.TempDir()
	hooks = filepath.Join(dir, "hooks")
	for _, class := range []string{"App", "VM", "Disk", "Log", "Other"} {
		writeScript(t, hooks, filepath.Join(class, "destroy"), "exit 0")
	}
	model = filepath.Join(dir, "model.json")
	data := `{"Objects": {"?": {"id": "env", "type": "E"}}, "ObjectsCopy": ` + runSnapshot + `, "Attributes": []}`
	if err := os.WriteFile(model, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return model, hooks
}

func runOptions(model, hooks string, f *fakeHooks) RunOptions {
	return RunOptions{
		ApplyOptions: ApplyOptions{Finder: &HookFinder{Dirs: []string{hooks}}, RunHook: f.run, Drain: f.drain},
		Model:        model,
		File:         model,
		InPlace:      true,
	}
}

// outcomesOf returns each object's outcome, in id order.
func outcomesOf(rep *Report) string {
	var out []string
	for i, o := range rep.Result.Objects {
		out = append(out, rep.Plan.ID(i)+"="+string(o.Outcome))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// copyIDs returns the ids of the objects the written model keeps in
// ObjectsCopy, sorted: what the next run will try again.
func copyIDs(t *testing.T, model string) string {
	t.Helper()
	doc, err := snapshot.ReadDocument(model, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, _, err := snapshot.LoadModel(doc)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range snap.Objects {
		ids = append(ids, snap.ID(int32(i)))
	}
	slices.Sort(ids)
	return strings.Join(ids, " ")
}

// TestRunProtocol runs the whole apply protocol in process, hooks replaced
// by fakeHooks: containment (a failure blocks its owners and its
// subscribers, transitively, and nothing else), --fail-fast, --force and
// the first interrupt (running hooks finish, nothing new starts, the
// model is written for what completed).
func TestRunProtocol(t *testing.T) {
	for _, tc := range []struct {
		name       string
		fail       []string
		drainAfter string
		failFast   bool
		force      bool
		ran        string // objects whose hook ran, in order
		outcomes   string
		kept       string // ObjectsCopy of the written model
		stopped    bool   // Result.Interrupted
	}{
		{
			name:     "all destroyed",
			ran:      "disk vm app log other",
			outcomes: "app=destroyed disk=destroyed log=destroyed other=destroyed vm=destroyed",
			kept:     "env",
		},
		{
			name:     "containment",
			fail:     []string{"disk"},
			ran:      "disk other",
			outcomes: "app=blocked disk=failed log=blocked other=destroyed vm=blocked",
			kept:     "app disk env log vm",
		},
		{
			name:     "a failure in the middle",
			fail:     []string{"vm"},
			ran:      "disk vm other",
			outcomes: "app=blocked disk=destroyed log=blocked other=destroyed vm=failed",
			kept:     "app disk env log vm", // disk stays inside vm's retained copy
		},
		{
			name:     "fail-fast",
			fail:     []string{"disk"},
			failFast: true,
			ran:      "disk",
			outcomes: "app=blocked disk=failed log=blocked other=pending vm=blocked",
			kept:     "app disk env log other vm",
		},
		{
			name:     "force",
			fail:     []string{"disk", "vm"},
			force:    true,
			ran:      "disk vm app log other",
			outcomes: "app=destroyed disk=destroyed log=destroyed other=destroyed vm=destroyed",
			kept:     "env",
		},
		{
			name:       "interrupt",
			drainAfter: "vm",
			ran:        "disk vm",
			outcomes:   "app=pending disk=destroyed log=pending other=pending vm=destroyed",
			kept:       "app disk env log other vm", // vm and disk stay inside app's retained copy
			stopped:    true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model, hooks := runFixture(t)
			f := &fakeHooks{fail: map[string]bool{}, drainAfter: tc.drainAfter, drain: make(chan struct{})}
			for _, id := range tc.fail {
				f.fail[id] = true
			}
			opts := runOptions(model, hooks, f)
			opts.FailFast, opts.Force = tc.failFast, tc.force
			rep, err := Run(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(f.ran, " "); got != tc.ran {
				t.Errorf("hooks ran for %q, want %q", got, tc.ran)
			}
			if got := outcomesOf(rep); got != tc.outcomes {
				t.Errorf("outcomes\n %s, want\n %s", got, tc.outcomes)
			}
			if rep.Result.Interrupted != tc.stopped {
				t.Errorf("interrupted %v, want %v", rep.Result.Interrupted, tc.stopped)
			}
			for i, o := range rep.Result.Objects {
				if tc.force && f.fail[rep.Plan.ID(i)] && o.Err == nil {
					t.Errorf("%s: forced without its failure", rep.Plan.ID(i))
				}
			}
			if got := copyIDs(t, model); got != tc.kept {
				t.Errorf("ObjectsCopy written %q, want %q", got, tc.kept)
			}
			if _, err := os.Lstat(journal.PathFor(model)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("journal left after a committed run: %v", err)
			}
		})
	}
}

// TestRunResume: a run that stops (an error that is not a hook's: nothing
// is written, the journal stays) is resumed by the next: the hooks the
// journal records as done do not run again and are reported resumed.
func TestRunResume(t *testing.T) {
	model, hooks := runFixture(t)
	before, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	first := &fakeHooks{crash: "vm"}
	_, err = Run(context.Background(), runOptions(model, hooks, first))
	if err == nil || !strings.Contains(err.Error(), "apply stopped") || !strings.Contains(err.Error(), journal.PathFor(model)) {
		t.Fatalf("first run: %v, want apply stopped naming the journal", err)
	}
	if after, _ := os.ReadFile(model); string(after) != string(before) {
		t.Fatal("a stopped run wrote the model")
	}
	if got := strings.Join(first.ran, " "); got != "disk vm" {
		t.Fatalf("first run ran %q", got)
	}

	second := &fakeHooks{}
	rep, err := Run(context.Background(), runOptions(model, hooks, second))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(second.ran, " "); got != "vm app log other" {
		t.Errorf("resumed run ran %q, want vm app log other (disk was done; vm's hook did not end)", got)
	}
	for i, o := range rep.Result.Objects {
		id := rep.Plan.ID(i)
		resumed := id == "disk"
		if o.Outcome != OutcomeDestroyed || len(o.Hooks) != 1 || o.Hooks[0].Resumed != resumed {
			t.Errorf("%s: %s, hooks %+v; want destroyed, one hook, resumed %v", id, o.Outcome, o.Hooks, resumed)
		}
	}
	if got := copyIDs(t, model); got != "env" {
		t.Errorf("ObjectsCopy written %q, want env", got)
	}
}

// TestRunRefuses: what Run refuses before any hook runs, with the error
// callers branch on, and nothing written.
func TestRunRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, opts *RunOptions)
		check func(error) bool
	}{
		{"stale plan", func(t *testing.T, opts *RunOptions) {
			opts.PlanPath = "plan.json"
			opts.Plan = &planfile.File{Inputs: []planfile.Input{{Role: "model", Path: opts.Model, SHA256: strings.Repeat("0", 64)}}, HooksDirs: opts.Finder.Dirs}
		}, func(err error) bool {
			var se *StaleError
			return errors.Is(err, ErrStalePlan) && errors.As(err, &se) && strings.Contains(err.Error(), "plan plan.json is stale: ")
		}},
		{"locked", func(t *testing.T, opts *RunOptions) {
			unlock, err := lockTarget(context.Background(), opts.File, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(unlock)
		}, func(err error) bool { return errors.Is(err, ErrLocked) }},
		{"interrupted lock wait", func(t *testing.T, opts *RunOptions) {
			unlock, err := lockTarget(context.Background(), opts.File, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(unlock)
			opts.LockTimeout = -1 // wait until interrupted
			drain := make(chan struct{})
			// Most often during the wait; before it, Run stops too
			// (TestRunInterruptedBeforeTheLock). apply_e2e_lock_wait_signal
			// signals a wait it has seen.
			time.AfterFunc(50*time.Millisecond, func() { close(drain) })
			opts.Drain = drain
		}, func(err error) bool { return errors.Is(err, ErrInterrupted) }},
		{"require hooks", func(t *testing.T, opts *RunOptions) {
			if err := os.Remove(filepath.Join(opts.Finder.Dirs[0], "Log", "destroy")); err != nil {
				t.Fatal(err)
			}
			opts.RequireHooks = true
		}, func(err error) bool {
			var me *MissingHooksError
			return errors.As(err, &me) && len(me.Objects) == 1 && me.Objects[0].ID == "log"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model, hooks := runFixture(t)
			before, _ := os.ReadFile(model)
			f := &fakeHooks{}
			opts := runOptions(model, hooks, f)
			tc.setup(t, &opts)
			_, err := Run(context.Background(), opts)
			if !tc.check(err) {
				t.Fatalf("err = %v (%T)", err, err)
			}
			if len(f.ran) > 0 {
				t.Errorf("hooks ran: %v", f.ran)
			}
			if after, _ := os.ReadFile(model); string(after) != string(before) {
				t.Error("model written")
			}
			if _, err := os.Lstat(journal.PathFor(model)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("journal made: %v", err)
			}
		})
	}
}

// TestRunDangling: references to doomed objects are refused once, before
// the journal, unless OnDanglingKeep.
func TestRunDangling(t *testing.T) {
	model, hooks := runFixture(t)
	data := `{"Objects": {"?": {"id": "env", "type": "E"}, "uses": "vm"}, "ObjectsCopy": ` + runSnapshot + `}`
	if err := os.WriteFile(model, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fakeHooks{}
	_, err := Run(context.Background(), runOptions(model, hooks, f))
	var de *DanglingError
	if !errors.As(err, &de) || len(de.Refs) != 1 || de.Refs[0].DoomedID != "vm" {
		t.Fatalf("err = %v, want a *DanglingError for vm", err)
	}
	opts := runOptions(model, hooks, f)
	opts.OnDanglingKeep = true
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.ran) != 5 {
		t.Errorf("with keep, hooks ran for %v", f.ran)
	}
	// The report warns that Murano's engine cannot load what was written.
	var warned []string
	for _, w := range rep.Warnings {
		if w.Code == order.WarnEngineCannotLoad {
			warned = append(warned, w.ID)
		}
	}
	if !slices.Equal(warned, []string{"vm"}) {
		t.Errorf("engine_cannot_load warnings for %v, want [vm]: %+v", warned, rep.Warnings)
	}
}

// TestRunReadsTheModelOnce: a model read before the lock (to tell it from
// a saved plan) is the one Run uses while the file is unchanged, and is
// read again when the file was replaced meanwhile (as another apply's
// atomic write replaces it).
func TestRunReadsTheModelOnce(t *testing.T) {
	for _, replaced := range []bool{false, true} {
		t.Run(fmt.Sprint("replaced=", replaced), func(t *testing.T) {
			model, hooks := runFixture(t)
			read, err := snapshot.ReadDocument(model, nil)
			if err != nil {
				t.Fatal(err)
			}
			if replaced {
				// Nothing doomed any more: another run destroyed them.
				next := filepath.Join(filepath.Dir(model), "next.json")
				if err := os.WriteFile(next, []byte(`{"Objects": {"?": {"id": "env", "type": "E"}}, "ObjectsCopy": {"?": {"id": "env", "type": "E"}}}`), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(next, model); err != nil {
					t.Fatal(err)
				}
			}
			f := &fakeHooks{}
			opts := runOptions(model, hooks, f)
			opts.Read = read
			rep, err := Run(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if used := rep.Inputs.Model == read; used == replaced {
				t.Errorf("used the document read before: %v, want %v", used, !replaced)
			}
			if want := map[bool]int{false: 5, true: 0}[replaced]; len(f.ran) != want {
				t.Errorf("hooks ran for %v, want %d", f.ran, want)
			}
		})
	}
}

// TestRunInterruptedBeforeTheLock: an interrupt that came before Run (a
// signal while the command line was parsed) ends it before the lock:
// ErrInterrupted, no lock file, no hook, the model as it was.
func TestRunInterruptedBeforeTheLock(t *testing.T) {
	model, hooks := runFixture(t)
	before, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeHooks{}
	opts := runOptions(model, hooks, f)
	drain := make(chan struct{})
	close(drain)
	opts.Drain = drain
	if _, err := Run(context.Background(), opts); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Run: %v, want ErrInterrupted", err)
	}
	if len(f.ran) > 0 {
		t.Errorf("hooks ran: %q", f.ran)
	}
	if _, err := os.Lstat(LockPath(model)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file: %v, want none", err)
	}
	if after, _ := os.ReadFile(model); string(after) != string(before) {
		t.Error("the model was written")
	}
}
