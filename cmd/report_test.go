package cmd

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/diff"
	"github.com/objgc/objgc/snapshot"
)

// TestApplyReportMarksForcedResumedAndHookless renders the text and JSON
// reports of a result holding one object of each kind: destroyed by its
// hook, destroyed by hooks an earlier run ran (resumed), destroyed under
// --force after a failed hook, destroyed with no destroy hook.
func TestApplyReportMarksForcedResumedAndHookless(t *testing.T) {
	snap, err := snapshot.LoadSnapshot(snapshot.NewDocument("snap.json", []byte(`{"?": {"id": "env", "type": "E"}, "apps": [
		{"?": {"id": "ran", "type": "T"}}, {"?": {"id": "resumed", "type": "T"}},
		{"?": {"id": "forced", "type": "T"}}, {"?": {"id": "hookless", "type": "U"}}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	in, err := snapshot.LoadGraph(snapshot.NewDocument("in.json", []byte(`{"?": {"id": "env", "type": "E"}, "apps": []}`)))
	if err != nil {
		t.Fatal(err)
	}
	d, err := diff.Compare(snap, in)
	if err != nil {
		t.Fatal(err)
	}
	p := order.NewPlan(d)
	if len(p.Groups) != 1 || !slices.Equal(p.Groups[0].Objects, []int32{0, 1, 2, 3}) {
		t.Fatalf("groups: %+v", p.Groups)
	}
	run := destroy.HookRun{Hook: "/h/T/destroy", Class: "T", Event: "destroy"}
	resumed := run
	resumed.Resumed = true
	failed := run
	failed.ExitCode, failed.Error, failed.StderrTail = 3, "exit status 3", "disk full\n"
	r := &destroy.ApplyResult{Objects: []destroy.ObjectResult{
		{Outcome: destroy.OutcomeDestroyed, BlockedBy: -1, Hooks: []destroy.HookRun{run}},
		{Outcome: destroy.OutcomeDestroyed, BlockedBy: -1, Hooks: []destroy.HookRun{resumed}},
		{Outcome: destroy.OutcomeDestroyed, BlockedBy: -1, Hooks: []destroy.HookRun{failed}, Err: errors.New("hook /h/T/destroy destroy of forced: exit status 3")},
		{Outcome: destroy.OutcomeDestroyed, BlockedBy: -1},
	}}
	ai := &applyInputs{target: "m.json"}
	var out bytes.Buffer
	streams := &IO{Out: &out, Getenv: func(string) string { return "" }}
	if err := writeApplyReport(streams, applyOptions{Format: "text"}, ai, p, r); err != nil {
		t.Fatal(err)
	}
	want := `destroyed T ran (group 1, 1 hook)
destroyed T resumed (group 1, 1 hook, 1 resumed)
destroyed (forced) T forced (group 1, 1 hook): hook /h/T/destroy destroy of forced: exit status 3
    stderr of /h/T/destroy:
      disk full
destroyed U hookless (group 1, no destroy hook)
4 destroyed, 0 failed, 0 blocked, 1 forced, 1 destroyed without a hook; wrote m.json
`
	if out.String() != want {
		t.Errorf("text report:\n%s\nwant:\n%s", out.String(), want)
	}

	rep := newApplyReport(ai, p, r)
	if !rep.Objects[2].Forced || rep.Objects[0].Forced || rep.Objects[3].Forced {
		t.Errorf("forced: %v %v %v %v", rep.Objects[0].Forced, rep.Objects[1].Forced, rep.Objects[2].Forced, rep.Objects[3].Forced)
	}
	if strings.Join(rep.DestroyedWithoutHook, ",") != "hookless" || rep.Summary.WithoutHook != 1 || rep.Summary.Forced != 1 {
		t.Errorf("without hook %q, summary %+v", rep.DestroyedWithoutHook, rep.Summary)
	}
	if !rep.Objects[1].Hooks[0].Resumed {
		t.Errorf("resumed hook not marked: %+v", rep.Objects[1].Hooks)
	}
}
