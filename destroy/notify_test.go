//go:build unix

package destroy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/objgc/objgc/destroy/journal"
	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/destroy/writeback"
	"github.com/objgc/objgc/internal/plantest"
)

// notifySnapshot has a live subscriber sub (class S) that owns a live
// object vm, and a doomed publisher pub (class P) whose destruction sub
// subscribes to with the handler given. A second doomed publisher pub2
// notifies sub too when two is set.
func notifySnapshot(handler string, two bool) (snap, incoming string) {
	sub := `"sub": {"?": {"id": "sub", "type": "S"}, "name": "s", "ref": "pub", "cfg": {"a": 1},
    "vm": {"?": {"id": "vm", "type": "VM"}, "flavor": "small"}}`
	pub2 := ""
	if two {
		pub2 = `,
  "pub2": {"?": {"id": "pub2", "type": "P", "dependencies": {"onDestruction": [{"subscriber": "sub", "handler": "` + handler + `"}]}}}`
	}
	snap = `{"?": {"id": "env", "type": "E"},
  ` + sub + `,
  "pub": {"?": {"id": "pub", "type": "P", "dependencies": {"onDestruction": [{"subscriber": "sub", "handler": "` + handler + `"}]}}}` + pub2 + `
}`
	incoming = `{"?": {"id": "env", "type": "E"},
  ` + strings.Replace(sub, `"ref": "pub", `, "", 1) + `
}`
	return snap, incoming
}

func notifyPlan(t *testing.T, handler string, two bool) *order.Plan {
	t.Helper()
	snap, in := notifySnapshot(handler, two)
	return plantest.Plan(t, snap, in)
}

// writeScript writes an executable sh script at dir/rel.
func writeScript(t *testing.T, dir, rel, body string) string {
	t.Helper()
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// applyNotify runs applyPlan on plan p with hooks dir hooks and a journal
// for model dir/model.json; TRACE is dir/trace for the hooks.
func applyNotify(t *testing.T, p *order.Plan, dir, hooks string) *ApplyResult {
	t.Helper()
	j, res, err := journal.Open(journal.PathFor(filepath.Join(dir, "model.json")), testInputs())
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	r, err := applyPlan(context.Background(), p, ApplyOptions{
		Finder:  &HookFinder{Dirs: []string{hooks}},
		Env:     append(os.Environ(), "TRACE="+filepath.Join(dir, "trace")),
		Journal: j,
		Resume:  res,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readTrace(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "trace"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

const traceArgv = `printf '%s|' "$(basename "$OBJGC_HOOK")" "$@" >>"$TRACE"
printf '%s %s %s %s %s\n' "$OBJGC_EVENT" "$OBJGC_HANDLER" "$OBJGC_OBJECT_ID" "$OBJGC_SUBSCRIBER_ID" "$OBJGC_CLASS" >>"$TRACE"
`

// TestApplyNotifyHookPlace: a handler H of a subscriber of class S is
// <dir>/S/notify/H, run with argv [hook, notify, H, publisher]; a handler
// named destroy runs S/notify/destroy, never the subscriber's destroy
// hook S/destroy.
func TestApplyNotifyHookPlace(t *testing.T) {
	for _, handler := range []string{"onPubRemoved", "destroy"} {
		t.Run(handler, func(t *testing.T) {
			dir := t.TempDir()
			hooks := filepath.Join(dir, "hooks")
			writeScript(t, hooks, "S/destroy", "echo 'S destroy hook ran' >>\"$TRACE\"\n")
			writeScript(t, hooks, "S/notify/"+handler, traceArgv)
			writeScript(t, hooks, "P/destroy", traceArgv)
			p := notifyPlan(t, handler, false)
			r := applyNotify(t, p, dir, hooks)
			want := handler + "|notify|" + handler + "|pub|notify " + handler + " pub sub S\n" +
				"destroy|destroy|pub|destroy  pub  P\n"
			if got := readTrace(t, dir); got != want {
				t.Errorf("trace:\n%s\nwant:\n%s", got, want)
			}
			if n := r.Notifications[0]; n.Err != nil || n.Hook == nil || n.Hook.Hook != filepath.Join(hooks, "S", "notify", handler) {
				t.Errorf("notification %+v, hook %+v", n, n.Hook)
			}
		})
	}
}

// TestApplyNotifyHookOldPlace: a file at S/<handler>, where notify hooks
// lived before, does not run; the notification fails with a warning that
// says where to move it.
func TestApplyNotifyHookOldPlace(t *testing.T) {
	dir := t.TempDir()
	hooks := filepath.Join(dir, "hooks")
	old := writeScript(t, hooks, "S/onPubRemoved", traceArgv)
	p := notifyPlan(t, "onPubRemoved", false)
	r := applyNotify(t, p, dir, hooks)
	if got := readTrace(t, dir); got != "" {
		t.Errorf("trace %q, want nothing run", got)
	}
	n := r.Notifications[0]
	want := filepath.Join(hooks, "S", "notify", "onPubRemoved")
	if n.Err == nil || n.Hook != nil || !strings.Contains(n.Err.Error(), old) || !strings.Contains(n.Err.Error(), "move it to "+want) {
		t.Errorf("notification %+v, want an error naming %s and %s", n, old, want)
	}
	if r.Objects[0].Outcome != OutcomeDestroyed {
		t.Errorf("pub %s, want destroyed: a failed notification is a warning", r.Objects[0].Outcome)
	}
}

// TestApplyLongClassName: a class name longer than a file name may be
// (255 bytes) has no hook; the object is destroyed, not failed.
func TestApplyLongClassName(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("c", 300)
	p := plantest.Plan(t, `{"?": {"id": "env", "type": "E"}, "x": {"?": {"id": "x", "type": "`+long+`"}}}`, `{"?": {"id": "env", "type": "E"}}`)
	hooks := filepath.Join(dir, "hooks")
	writeScript(t, hooks, "P/destroy", "exit 0\n") // the lookup reaches the long name
	r := applyNotify(t, p, dir, hooks)
	if o := r.Objects[0]; o.Outcome != OutcomeDestroyed || o.Err != nil || len(o.Hooks) != 0 {
		t.Errorf("x: %+v, want destroyed without hooks", o)
	}
}

// TestApplyNotifyPatchChecked: a patch is checked against the rules of
// the write-back before it is journalled; one that fails them is a failed
// notification, not applied, and the journal holds no successful end for
// it, so that the hook runs again next time.
func TestApplyNotifyPatchChecked(t *testing.T) {
	for _, tc := range []struct {
		name, patch string
		reason      string // "" accepted
		check       string // accepted: a fragment of the written subscriber
	}{
		{name: "property", patch: `{"name": "t"}`, check: `"name": "t"`},
		{name: "reference removed", patch: `{"ref": null}`, check: `"name": "s"`},
		{name: "re-reference doomed", patch: `{"old": "pub"}`, check: `"old": {"?": {"destroyed": true, "id": "pub"`},
		{name: "merge into owned object", patch: `{"vm": {"flavor": "large"}}`, check: `"flavor": "large"`},
		{name: "plain object merge", patch: `{"cfg": {"b": [1, {"c": null}]}}`, check: `"cfg": {"a": 1, "b": [1,{"c":null}]}`},
		{name: "removes owned object", patch: `{"vm": null}`, reason: "it removes object vm at $.vm"},
		{name: "replaces owned object", patch: `{"vm": "vm"}`, reason: "it replaces object vm at $.vm"},
		{name: "replaces object with array", patch: `{"vm": [1]}`, reason: "it replaces object vm at $.vm"},
		{name: "adds object", patch: `{"new": {"?": {"id": "n", "type": "T"}}}`, reason: `it adds an object (a "?" header) at $.new`},
		{name: "adds object in array", patch: `{"list": [1, {"?": {"id": "n"}}]}`, reason: `it adds an object (a "?" header) at $.list[1]`},
		{name: "header key in merge", patch: `{"cfg": {"?": {"id": "n"}}}`, reason: `it sets the header "?" at $.cfg`},
		{name: "own header", patch: `{"?": {"id": "other"}}`, reason: `it sets the header "?" at $`},
		{name: "owned header", patch: `{"vm": {"?": {"type": "X"}}}`, reason: `it sets the header "?" at $.vm`},
		{name: "invalid UTF-8 value", patch: "{\"name\": \"a\xffb\"}", reason: "the string at $.name holds invalid UTF-8 (byte 0xff)"},
		{name: "invalid UTF-8 key", patch: "{\"cfg\": {\"n\xc3\": 1}}", reason: "a key in the object at $.cfg holds invalid UTF-8 (byte 0xc3)"},
		{name: "invalid UTF-8 in array", patch: "{\"list\": [1, \"\xed\xa0\x80\"]}", reason: "the string at $.list[1] holds invalid UTF-8 (byte 0xed)"},
		{name: "lone surrogate key", patch: `{"n\ud800": 1}`, reason: "the key at $[\"n\ufffd\"] holds \\ud800, a lone UTF-16 surrogate"},
		{name: "lone surrogate value", patch: `{"name": "\udc00"}`, check: `"name": "\udc00"`},
		{name: "surrogate pair key", patch: `{"k\ud83d\ude00": 1}`, check: `"k\ud83d\ude00": 1`},
		{name: "too deep", patch: `{"deep": ` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`, reason: "the patched subscriber nests deeper than 999 levels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			hooks := filepath.Join(dir, "hooks")
			writeScript(t, hooks, "S/notify/onPubRemoved", "cat >/dev/null\nprintf '%s' '{\"patch\": "+tc.patch+"}'\n")
			p := notifyPlan(t, "onPubRemoved", false)
			r := applyNotify(t, p, dir, hooks)
			n := r.Notifications[0]
			if tc.reason == "" {
				if n.Err != nil || string(n.Patch) != tc.patch {
					t.Fatalf("notification err %v, patch %s; want %s accepted", n.Err, n.Patch, tc.patch)
				}
			} else {
				if n.Err == nil || !strings.Contains(n.Err.Error(), "patch rejected: "+tc.reason) || n.Patch != nil {
					t.Fatalf("notification err %v, patch %s; want rejected: %s", n.Err, n.Patch, tc.reason)
				}
				if n.Hook == nil || n.Hook.Error == "" {
					t.Errorf("hook run %+v, want its error", n.Hook)
				}
			}
			// The write-back takes what was accepted.
			var b strings.Builder
			if err := writeBack(&b, p, writeback.Effects{Destroyed: r.Destroyed(), Patches: r.Patches(p)}, nil, false); err != nil {
				t.Fatalf("write-back: %v", err)
			}
			if !strings.Contains(b.String(), `"vm": {"?": {"id": "vm", "type": "VM"}`) {
				t.Errorf("vm left the model:\n%s", b.String())
			}
			if tc.check != "" && !strings.Contains(b.String(), tc.check) {
				t.Errorf("written model lacks %s:\n%s", tc.check, b.String())
			}
			// The journal: a rejected patch is not a successful end.
			j, res, err := journal.Open(journal.PathFor(filepath.Join(dir, "model.json")), testInputs())
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			for k, done := range res.Done {
				if k.Subscriber == "sub" && done.OK != (tc.reason == "") {
					t.Errorf("journal end of %v: ok %v", k, done.OK)
				}
			}
		})
	}
}

// journalledPatch makes what an earlier objgc left when it journalled the
// notification onPubRemoved of sub about pub as done with patch, without
// checking it: a hooks dir whose handler appends to the trace if it runs
// again, and the journal. It returns the directory, the hooks dir and the
// plan.
func journalledPatch(t *testing.T, patch string) (dir, hooks string, p *order.Plan) {
	t.Helper()
	dir = t.TempDir()
	hooks = filepath.Join(dir, "hooks")
	hook := writeScript(t, hooks, "S/notify/onPubRemoved", "echo ran >>\"$TRACE\"\n")
	p = notifyPlan(t, "onPubRemoved", false)
	j, _, err := journal.Open(journal.PathFor(filepath.Join(dir, "model.json")), testInputs())
	if err != nil {
		t.Fatal(err)
	}
	k := journal.HookKey{Hook: hook, Event: "onPubRemoved", ID: "pub", Subscriber: "sub"}
	if err := j.HookStarted(k); err != nil {
		t.Fatal(err)
	}
	if err := hookEnded(j, k, journal.HookResult{OK: true, Patch: json.RawMessage(patch)}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, hooks, p
}

// TestApplyNotifyPatchResumedChecked: a patch an earlier objgc journalled
// as done without these checks is checked when the run resumes: it is a
// failed notification, not a write-back that fails on every run.
func TestApplyNotifyPatchResumedChecked(t *testing.T) {
	dir, hooks, p := journalledPatch(t, `{"vm": null}`)
	r := applyNotify(t, p, dir, hooks)
	n := r.Notifications[0]
	if n.Err == nil || n.Patch != nil || !strings.Contains(n.Err.Error(), "it removes object vm at $.vm") ||
		!strings.Contains(n.Err.Error(), journal.PathFor(filepath.Join(dir, "model.json"))) {
		t.Errorf("notification err %v, patch %s; want the journalled patch rejected, naming the journal", n.Err, n.Patch)
	}
	if got := readTrace(t, dir); got != "" {
		t.Errorf("trace %q: a hook the journal holds as done ran again", got)
	}
	var b strings.Builder
	if err := writeBack(&b, p, writeback.Effects{Destroyed: r.Destroyed(), Patches: r.Patches(p)}, nil, false); err != nil {
		t.Fatalf("write-back: %v", err)
	}
}

// TestApplyNotifyPatchResumedInvalidUTF8: a patch that an earlier objgc
// journalled as done although the write-back refuses it (invalid UTF-8;
// a key written twice, which the reader refuses) made the write-back fail
// on every run. On resume it is a failed notification: the hook does not
// run again and the model is written without the patch.
func TestApplyNotifyPatchResumedInvalidUTF8(t *testing.T) {
	for _, tc := range []struct{ name, patch, reason string }{
		{"invalid UTF-8", "{\"name\": \"\xff\"}", "the string at $.name holds invalid UTF-8 (byte 0xff)"},
		{"duplicate key", `{"new": {"a": 1, "a": 2}}`, `the patched subscriber would not load back ($.Objects is the subscriber): the patched subscriber: $.Objects.new.a: duplicate key "a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, hooks, p := journalledPatch(t, tc.patch)
			r := applyNotify(t, p, dir, hooks)
			n := r.Notifications[0]
			if n.Err == nil || n.Patch != nil || !strings.Contains(n.Err.Error(), "records from an earlier run is rejected, and not applied: "+tc.reason) {
				t.Errorf("notification err %v, patch %q; want the journalled patch rejected: %s", n.Err, n.Patch, tc.reason)
			}
			if got := readTrace(t, dir); got != "" {
				t.Errorf("trace %q: a hook the journal holds as done ran again", got)
			}
			var b strings.Builder
			if err := writeBack(&b, p, writeback.Effects{Destroyed: r.Destroyed(), Patches: r.Patches(p)}, nil, false); err != nil {
				t.Fatalf("write-back: %v", err)
			}
			if !strings.Contains(b.String(), `"name": "s"`) || !strings.Contains(b.String(), `"cfg": {"a": 1}`) {
				t.Errorf("written model is not the unpatched subscriber:\n%s", b.String())
			}
		})
	}
}

// TestApplyNotifyPatchesInOrder: the patches of two notifications to one
// subscriber are both checked and applied, the second over the first.
func TestApplyNotifyPatchesInOrder(t *testing.T) {
	dir := t.TempDir()
	hooks := filepath.Join(dir, "hooks")
	writeScript(t, hooks, "S/notify/onPubRemoved", `cat >/dev/null
printf '{"patch": {"cfg": "x-%s", "last": "x-%s", "%s": true}}' "$OBJGC_OBJECT_ID" "$OBJGC_OBJECT_ID" "$OBJGC_OBJECT_ID"
`)
	p := notifyPlan(t, "onPubRemoved", true)
	r := applyNotify(t, p, dir, hooks)
	for i, n := range r.Notifications {
		if n.Err != nil || n.Patch == nil {
			t.Fatalf("notification %d: err %v, patch %s", i, n.Err, n.Patch)
		}
	}
	var b strings.Builder
	if err := writeBack(&b, p, writeback.Effects{Destroyed: r.Destroyed(), Patches: r.Patches(p)}, nil, false); err != nil {
		t.Fatalf("write-back: %v", err)
	}
	last := p.ID(p.Notifications[len(p.Notifications)-1].Publisher)
	for _, want := range []string{`"cfg": "x-` + last + `"`, `"last": "x-` + last + `"`, `"pub": true`, `"pub2": true`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("written model lacks %s:\n%s", want, b.String())
		}
	}
}

// TestWriteBackRefusesObjectPatches: the write-back applies patches with
// CheckPatch too, so a patch that reaches it unchecked fails there, never
// leaking an object.
func TestWriteBackRefusesObjectPatches(t *testing.T) {
	p := notifyPlan(t, "onPubRemoved", false)
	destroyed := []bool{true}
	for _, tc := range []struct{ patch, want string }{
		{`{"vm": null}`, "write-back: patch for subscriber sub at $.sub: it removes object vm at $.vm"},
		{`{"cfg": [{"?": {"id": "x"}}]}`, `it adds an object (a "?" header) at $.cfg[0]`},
	} {
		var b strings.Builder
		err := writeBack(&b, p, writeback.Effects{Destroyed: destroyed, Patches: map[string][]json.RawMessage{"sub": {json.RawMessage(tc.patch)}}}, nil, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("patch %s: err %v, want %q", tc.patch, err, tc.want)
		}
	}
}

// TestApplyNotifyPatchEveryCopy: a subscriber written twice in the
// incoming model is patched in both copies, so a patch is checked on
// both: here it would remove an object from the second copy only.
func TestApplyNotifyPatchEveryCopy(t *testing.T) {
	dir := t.TempDir()
	hooks := filepath.Join(dir, "hooks")
	writeScript(t, hooks, "S/notify/onPubRemoved", `cat >/dev/null; echo '{"patch": {"vm": null}}'`+"\n")
	p := plantest.Plan(t, `{"?": {"id": "env", "type": "E"},
  "sub": {"?": {"id": "sub", "type": "S"}, "vm": "vm"},
  "pub": {"?": {"id": "pub", "type": "P", "dependencies": {"onDestruction": [{"subscriber": "sub", "handler": "onPubRemoved"}]}}}
}`, `{"?": {"id": "env", "type": "E"},
  "sub": {"?": {"id": "sub", "type": "S"}, "vm": "vm"},
  "again": {"?": {"id": "sub", "type": "S"}, "vm": {"?": {"id": "vm", "type": "VM"}}}
}`)
	r := applyNotify(t, p, dir, hooks)
	n := r.Notifications[0]
	if n.Err == nil || n.Patch != nil || !strings.Contains(n.Err.Error(), "patch rejected: copy 2 of 2 of sub: it removes object vm at $.vm") {
		t.Errorf("notification err %v, patch %s; want rejected for the second copy", n.Err, n.Patch)
	}
}

// TestApplyNotifyPatchRevives: a patch value equal to a doomed id (once,
// however often the patch names it; never a key) is reported with the
// notification and as a patch_revives_doomed warning naming the
// subscriber, the handler and the doomed id.
func TestApplyNotifyPatchRevives(t *testing.T) {
	dir := t.TempDir()
	hooks := filepath.Join(dir, "hooks")
	writeScript(t, hooks, "S/notify/onPubRemoved", `cat >/dev/null
printf '%s' '{"patch": {"old": "pub", "list": ["pub", "x", {"deep": "pub"}], "pub": 1, "name": "vm"}}'
`)
	p := notifyPlan(t, "onPubRemoved", false)
	r := applyNotify(t, p, dir, hooks)
	n := r.Notifications[0]
	if n.Err != nil || len(n.Revives) != 1 || p.ID(n.Revives[0]) != "pub" {
		t.Fatalf("notification err %v, revives %v; want pub once", n.Err, n.Revives)
	}
	ws := r.RevivalWarnings(p)
	if len(ws) != 1 || ws[0].Code != order.WarnPatchRevivesDoomed || ws[0].ID != "pub" ||
		!strings.Contains(ws[0].Message, "the patch of handler onPubRemoved of subscriber sub (notified of pub) re-references doomed object pub") {
		t.Errorf("warnings %+v", ws)
	}

	// A patch naming no doomed id warns of nothing.
	writeScript(t, hooks, "S/notify/onPubRemoved", "cat >/dev/null\nprintf '%s' '{\"patch\": {\"pub\": \"vm\"}}'\n")
	os.Remove(journal.PathFor(filepath.Join(dir, "model.json")))
	r = applyNotify(t, p, dir, hooks)
	if n := r.Notifications[0]; n.Err != nil || n.Revives != nil || len(r.RevivalWarnings(p)) != 0 {
		t.Errorf("notification err %v, revives %v; want none", n.Err, n.Revives)
	}
}
