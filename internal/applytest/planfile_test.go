package applytest

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestApplySavedPlan: a plan saved with objgc plan --out runs; once the
// model has changed, apply refuses it with exit 5 and leaves the model
// alone.
func TestApplySavedPlan(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	model := e.copyPair("region-removed-handlers.json")
	installHooks(t, e.hooks, e.readFile("m.json"), traceHook)
	p := e.plan(model)
	mustExit(t, e.objgc("plan", "--hooks-dir", e.hooks, "--out", "plan.json", model), 0)
	r := e.objgc("apply", "--hooks-dir", e.hooks, "plan.json")
	mustExit(t, r, 0)
	checkOrder(t, e.traceRuns(), expectedBlocks(p, nil))
	if left := e.plan(model).doomed(); len(left) > 0 {
		t.Errorf("still doomed: %v", left)
	}

	// The plan is stale now: the apply rewrote the model.
	before := e.readFile("m.json")
	n := len(e.trace())
	r = e.objgc("apply", "--hooks-dir", e.hooks, "plan.json")
	mustExit(t, r, 5)
	if !strings.Contains(r.stderr, "plan.json is stale") || !strings.Contains(r.stderr, "m.json changed") {
		t.Errorf("stderr does not say the plan is stale:\n%s", r.stderr)
	}
	if !bytes.Equal(e.readFile("m.json"), before) || len(e.trace()) != n {
		t.Errorf("a stale plan changed the model or ran hooks")
	}

	// An edit of the model (one byte) makes a fresh plan stale too.
	model = e.copyPair("app-removed.json")
	mustExit(t, e.objgc("plan", "--hooks-dir", e.hooks, "--out", "plan.json", model), 0)
	edited := append(e.readFile("m.json"), '\n')
	e.writeFile("m.json", edited)
	r = e.objgc("apply", "--hooks-dir", e.hooks, "plan.json")
	mustExit(t, r, 5)
	if !bytes.Equal(e.readFile("m.json"), edited) || len(e.trace()) != n {
		t.Errorf("a stale plan changed the model or ran hooks")
	}
	if _, err := os.Stat(model + ".journal"); !os.IsNotExist(err) {
		t.Errorf("a stale plan left a journal: %v", err)
	}
}

// TestDangling: a model with a reference to a doomed object is refused
// (exit 1, nothing written, no hook run) unless --on-dangling=keep, which
// destroys the object and keeps it in Objects flagged destroyed.
func TestDangling(t *testing.T) {
	t.Parallel()
	const (
		doomed   = "769af50c-9629-4694-b623-e9b392941279"
		referrer = "fda74653-8b66-42e2-be16-12ebc87d7570"
	)
	e := newEnv(t)
	model := e.copyPair("dangling-reference.json")
	before := e.readFile("m.json")
	installHooks(t, e.hooks, before, traceHook)

	r := e.objgc("apply", "--hooks-dir", e.hooks, model)
	mustExit(t, r, 1)
	if !strings.Contains(r.stderr, referrer+" references doomed "+doomed+" at $.Objects.services[1].database") ||
		!strings.Contains(r.stderr, "--on-dangling=keep") {
		t.Errorf("stderr does not name the reference:\n%s", r.stderr)
	}
	if !bytes.Equal(e.readFile("m.json"), before) || len(e.trace()) != 0 {
		t.Errorf("a refused apply changed the model or ran hooks: %q", e.trace())
	}
	if _, err := os.Stat(model + ".journal"); !os.IsNotExist(err) {
		t.Errorf("a refused apply left a journal: %v", err)
	}
	// The same from a saved plan.
	mustExit(t, e.objgc("plan", "--hooks-dir", e.hooks, "--out", "plan.json", model), 0)
	r = e.objgc("apply", "--hooks-dir", e.hooks, "plan.json")
	mustExit(t, r, 1)
	if !strings.Contains(r.stderr, "references doomed "+doomed) {
		t.Errorf("stderr does not name the reference:\n%s", r.stderr)
	}
	if !bytes.Equal(e.readFile("m.json"), before) || len(e.trace()) != 0 {
		t.Errorf("a refused apply changed the model or ran hooks: %q", e.trace())
	}

	r = e.objgc("apply", "--hooks-dir", e.hooks, "--on-dangling=keep", model)
	mustExit(t, r, 0)
	if len(e.traceRuns()) != 2 {
		t.Errorf("trace %q, want both objects destroyed", e.trace())
	}
	var out struct{ Objects, ObjectsCopy any }
	if err := json.Unmarshal(e.readFile("m.json"), &out); err != nil {
		t.Fatal(err)
	}
	for name, tree := range map[string]any{"Objects": out.Objects, "ObjectsCopy": out.ObjectsCopy} {
		obj := findObject(tree, doomed)
		if obj == nil {
			t.Errorf("%s does not hold the referenced object %s", name, doomed)
			continue
		}
		if h := obj["?"].(map[string]any); h["destroyed"] != true {
			t.Errorf("%s: %s is not flagged destroyed: %v", name, doomed, h)
		}
		// The object's own instance, destroyed too, comes along inside it
		// (docs/writeback.md), flagged as well.
		if inst := findObject(obj, "76b9ca88-c668-4e37-a830-5845adc10b0e"); inst != nil && inst["?"].(map[string]any)["destroyed"] != true {
			t.Errorf("%s: the destroyed instance inside %s is not flagged destroyed", name, doomed)
		}
	}
	// The flagged object is not doomed again.
	if left := e.plan(model).doomed(); len(left) > 0 {
		t.Errorf("still doomed: %v", left)
	}
}

// findObject returns the first object with id in tree.
func findObject(tree any, id string) map[string]any {
	switch v := tree.(type) {
	case map[string]any:
		if h, ok := v["?"].(map[string]any); ok && h["id"] == id {
			return v
		}
		for _, x := range v {
			if o := findObject(x, id); o != nil {
				return o
			}
		}
	case []any:
		for _, x := range v {
			if o := findObject(x, id); o != nil {
				return o
			}
		}
	}
	return nil
}
