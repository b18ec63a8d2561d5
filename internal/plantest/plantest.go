// Package plantest plans models held in memory for the tests of the
// packages that run plans (destroy, destroy/writeback). destroy/order's
// own tests keep their copies: this package imports order.
package plantest

import (
	"testing"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/diff"
	"github.com/objgc/objgc/snapshot"
)

// Compare is diff.Compare of trees held in memory, which cannot fault: it
// panics on an error.
func Compare(snap, in *snapshot.Tree) *diff.Result {
	r, err := diff.Compare(snap, in)
	if err != nil {
		panic(err)
	}
	return r
}

// Plan plans two bare object trees (or envelopes), as --snapshot and
// --graph do, failing tb when either is not a model.
func Plan(tb testing.TB, snapJSON, incomingJSON string) *order.Plan {
	tb.Helper()
	snap, err := snapshot.LoadSnapshot(snapshot.NewDocument("snap.json", []byte(snapJSON)))
	if err != nil {
		tb.Fatal(err)
	}
	in, err := snapshot.LoadGraph(snapshot.NewDocument("in.json", []byte(incomingJSON)))
	if err != nil {
		tb.Fatal(err)
	}
	return order.NewPlan(Compare(snap, in))
}

// GroupIDs returns the plan's groups as ids, in destruction order.
func GroupIDs(p *order.Plan) [][]string {
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
