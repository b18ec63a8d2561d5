package destroy

import (
	"testing"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/diff"
	"github.com/objgc/objgc/snapshot"
)

// mustCompare is diff.Compare of trees held in memory, which cannot fault.
func mustCompare(snap, in *snapshot.Tree) *diff.Result {
	r, err := diff.Compare(snap, in)
	if err != nil {
		panic(err)
	}
	return r
}

// planJSON plans two bare object trees (or envelopes), as --snapshot and
// --graph do.
func planJSON(t *testing.T, snapJSON, incomingJSON string) *order.Plan {
	t.Helper()
	snap, err := snapshot.LoadSnapshot(snapshot.NewDocument("snap.json", []byte(snapJSON)))
	if err != nil {
		t.Fatal(err)
	}
	in, err := snapshot.LoadGraph(snapshot.NewDocument("in.json", []byte(incomingJSON)))
	if err != nil {
		t.Fatal(err)
	}
	return order.NewPlan(mustCompare(snap, in))
}

// groupIDs returns the plan's groups as ids, in destruction order.
func groupIDs(p *order.Plan) [][]string {
	var out [][]string
	for _, g := range p.Groups {
		var ids []string
		for _, i := range g.Objects {
			ids = append(ids, p.ID(int(i)))
		}
		out = append(out, ids)
	}
	return out
}
