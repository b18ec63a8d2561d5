package main

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdPlanedit edits a saved plan as someone with write access to it
// could: planedit PLAN OP ARGS. OPs:
//
//   - drop-object ID: the object leaves its group (the group stays);
//   - drop-notification N: the notification at index N goes;
//   - retype ID NAME: the object's type_ref.name becomes NAME and its
//     hooks none, as if NAME had no hooks.
//
// The plan is rewritten with encoding/json (keys sorted); it stays a
// plan of the same format_version. An ID or N the plan does not hold
// fails.
func cmdPlanedit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: planedit PLAN drop-object ID | drop-notification N | retype ID NAME")
	}
	path := ts.MkAbs(args[0])
	data, err := os.ReadFile(path)
	ts.Check(err)
	var plan map[string]any
	ts.Check(json.Unmarshal(data, &plan))
	groups, _ := plan["groups"].([]any)
	object := func(id string) (g map[string]any, k int) {
		for _, gv := range groups {
			g := gv.(map[string]any)
			for k, ov := range g["objects"].([]any) {
				if ov.(map[string]any)["id"] == id {
					return g, k
				}
			}
		}
		ts.Fatalf("planedit: %s lists no object %s", args[0], id)
		return nil, 0
	}
	switch {
	case args[1] == "drop-object" && len(args) == 3:
		g, k := object(args[2])
		g["objects"] = slices.Delete(g["objects"].([]any), k, k+1)
	case args[1] == "drop-notification" && len(args) == 3:
		n, err := strconv.Atoi(args[2])
		ts.Check(err)
		ns, _ := plan["notifications"].([]any)
		if n < 0 || n >= len(ns) {
			ts.Fatalf("planedit: %s has no notification %d", args[0], n)
		}
		plan["notifications"] = slices.Delete(ns, n, n+1)
	case args[1] == "retype" && len(args) == 4:
		g, k := object(args[2])
		o := g["objects"].([]any)[k].(map[string]any)
		o["type_ref"].(map[string]any)["name"] = args[3]
		o["hooks"] = []any{}
	default:
		ts.Fatalf("usage: planedit PLAN drop-object ID | drop-notification N | retype ID NAME")
	}
	out, err := json.MarshalIndent(plan, "", "  ")
	ts.Check(err)
	ts.Check(os.WriteFile(path, append(out, '\n'), 0o644))
}
