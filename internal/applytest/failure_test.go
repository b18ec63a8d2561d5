package applytest

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestFailureBlocksAndResumes fails one object's destroy hook (exit 3):
// the object and every object that must come after it stay in the
// model's ObjectsCopy, the others are destroyed, apply exits 3 and the
// report ties each blocked object to the failure. A second apply with the
// hook fixed destroys exactly those, in order.
func TestFailureBlocksAndResumes(t *testing.T) {
	for _, tc := range []struct{ pair, fail string }{
		{"app-removed.json", "76b9ca88-c668-4e37-a830-5845adc10b0e"},         // an instance: its app is blocked
		{"environment-deleted.json", "825dc61d-217a-4fd8-80fc-43807f8d6fa2"}, // up to the environment
		{"region-removed-handlers.json", "72d2c13c600247c98e09e2e3c1cd9d70"}, // a network: its subscriber is blocked
		{"environment-deleted.json", "33e91790-5c44-40ce-9292-9dd4856325a0"}, // a middle group
	} {
		t.Run(strings.TrimSuffix(tc.pair, ".json")+"/"+tc.fail[:8], func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			model := e.copyPair(tc.pair)
			installHooks(t, e.hooks, e.readFile("m.json"), traceHook)
			p := e.plan(model)
			blocked := p.after(tc.fail)
			if len(blocked) == 0 {
				t.Fatalf("%s blocks nothing: pick another object", tc.fail)
			}
			stay := maps.Clone(blocked)
			stay[tc.fail] = true
			e.touchState("fail/"+tc.fail, "3")

			r := e.objgc("apply", "--hooks-dir", e.hooks, "--parallelism", "4", "--format", "json", model)
			mustExit(t, r, 3)
			rep := parseReport(t, r)
			var failed *string
			for _, o := range rep.Objects {
				switch {
				case o.ID == tc.fail:
					if o.State != "failed" || !strings.Contains(o.Error, "exit status 3") {
						t.Errorf("failed object: state %q, error %q", o.State, o.Error)
					}
					if len(o.Hooks) != 1 || !strings.Contains(o.Hooks[0].StderrTail, "cannot destroy "+tc.fail+": the cloud said no\ngiving up") || o.Hooks[0].ExitCode != 3 {
						t.Errorf("failed object's hooks: %+v", o.Hooks)
					}
					failed = &o.ID
				case blocked[o.ID]:
					if o.State != "blocked" || o.BlockedBy == nil || *o.BlockedBy != tc.fail || len(o.Hooks) != 0 {
						t.Errorf("blocked object %s: state %q, blocked_by %v, hooks %+v", o.ID, o.State, o.BlockedBy, o.Hooks)
					}
				default:
					if o.State != "destroyed" {
						t.Errorf("object %s: state %q, want destroyed", o.ID, o.State)
					}
				}
			}
			if failed == nil {
				t.Fatalf("the report does not name %s:\n%s", tc.fail, r.stdout)
			}
			if rep.Summary.Failed != 1 || rep.Summary.Blocked != len(blocked) || rep.Summary.Destroyed != len(p.doomed())-len(stay) {
				t.Errorf("summary %+v, want 1 failed, %d blocked, %d destroyed", rep.Summary, len(blocked), len(p.doomed())-len(stay))
			}
			// The failure goes to objgc's log, prefixed with the object and event.
			if !strings.Contains(r.stderr, tc.fail+" destroy: cannot destroy "+tc.fail) {
				t.Errorf("stderr does not carry the hook's stderr:\n%s", r.stderr)
			}
			for _, l := range e.traceRuns() {
				if f := strings.Fields(l); f[0] == "destroy" && stay[f[1]] {
					t.Errorf("a hook of a blocked or failed object completed: %s", l)
				}
			}

			// The output keeps exactly the failed and blocked objects doomed.
			again := e.plan(model)
			if got := again.doomed(); !maps.Equal(got, stay) {
				t.Fatalf("after the failed run, doomed %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(stay)))
			}

			// The hook fixed, a second run destroys exactly them, in order.
			if err := os.Remove(e.state + "/fail/" + tc.fail); err != nil {
				t.Fatal(err)
			}
			n := len(e.traceRuns())
			r = e.objgc("apply", "--hooks-dir", e.hooks, "--parallelism", "4", model)
			mustExit(t, r, 0)
			checkOrder(t, e.traceRuns()[n:], expectedBlocks(again, nil))
			if left := e.plan(model).doomed(); len(left) > 0 {
				t.Errorf("after the second run, still doomed: %v", left)
			}
		})
	}
}

// TestAddedThenRemovedIsDestroyed: an object that appears in the incoming
// model during a run that fails, and is removed before a later run, is
// destroyed by that later run (the failed run's ObjectsCopy holds it).
func TestAddedThenRemovedIsDestroyed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const (
		failing = "76b9ca88-c668-4e37-a830-5845adc10b0e"
		added   = "00000000-0000-4000-8000-0000000000ad"
	)
	var env map[string]any
	model := e.copyPair("app-removed.json")
	if err := json.Unmarshal(e.readFile("m.json"), &env); err != nil {
		t.Fatal(err)
	}
	objects := env["Objects"].(map[string]any)
	objects["services"] = append(objects["services"].([]any), map[string]any{
		"?":    map[string]any{"id": added, "type": "io.murano.apps.Added/1.0.0@io.murano.apps"},
		"name": "added in the first run",
	})
	data, _ := json.MarshalIndent(env, "", "  ")
	e.writeFile("m.json", data)
	installHooks(t, e.hooks, data, traceHook)
	e.touchState("fail/"+failing, "3")

	mustExit(t, e.objgc("apply", "--hooks-dir", e.hooks, model), 3)
	if e.plan(model).doomed()[added] {
		t.Fatalf("%s is doomed while it is in the incoming model", added)
	}

	// The next deployment drops the added object.
	if err := json.Unmarshal(e.readFile("m.json"), &env); err != nil {
		t.Fatal(err)
	}
	objects = env["Objects"].(map[string]any)
	var kept []any
	for _, s := range objects["services"].([]any) {
		if s.(map[string]any)["?"].(map[string]any)["id"] != added {
			kept = append(kept, s)
		}
	}
	objects["services"] = kept
	data, _ = json.MarshalIndent(env, "", "  ")
	e.writeFile("m.json", data)
	if !e.plan(model).doomed()[added] {
		t.Fatalf("%s is not doomed once removed: it leaked from ObjectsCopy", added)
	}
	if err := os.Remove(e.state + "/fail/" + failing); err != nil {
		t.Fatal(err)
	}
	n := len(e.traceRuns())
	mustExit(t, e.objgc("apply", "--hooks-dir", e.hooks, model), 0)
	if !slices.Contains(e.traceRuns()[n:], "destroy "+added+" 1") {
		t.Errorf("%s was not destroyed; trace %q", added, e.traceRuns()[n:])
	}
	if left := e.plan(model).doomed(); len(left) > 0 {
		t.Errorf("still doomed: %v", left)
	}
}
