package hooktest

import (
	"fmt"
	"slices"

	"github.com/objgc/objgc/destroy/planfile"
)

// Doomed returns the doomed ids of plan p (objgc plan --format json,
// read by planfile.Parse, the reader apply uses).
func Doomed(p *planfile.File) map[string]bool {
	out := map[string]bool{}
	for _, g := range p.Groups {
		for _, o := range g.Objects {
			out[o.ID] = true
		}
	}
	return out
}

// ExpectedBlocks is the order the trace must follow for plan p: the
// notifications group by group, then the destroy groups; within a block
// any order. Notifications without a hook, and the objects in skip, are
// left out.
func ExpectedBlocks(p *planfile.File, skip map[string]bool) [][]string {
	var blocks [][]string
	for i, n := range p.Notifications {
		if n.Hook == nil {
			continue
		}
		line := fmt.Sprintf("%s %s %d", n.Handler, n.Publisher, n.Group)
		if i > 0 && len(blocks) > 0 && p.Notifications[i-1].Group == n.Group {
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], line)
			continue
		}
		blocks = append(blocks, []string{line})
	}
	for _, g := range p.Groups {
		var b []string
		for _, o := range g.Objects {
			if !skip[o.ID] {
				b = append(b, fmt.Sprintf("destroy %s %d", o.ID, g.Index))
			}
		}
		if len(b) > 0 {
			blocks = append(blocks, b)
		}
	}
	return blocks
}

// CheckOrder returns an error unless runs consist of blocks, in order,
// each block's lines in any order.
func CheckOrder(runs []string, blocks [][]string) error {
	var want []string
	for _, b := range blocks {
		want = append(want, b...)
	}
	if len(runs) != len(want) {
		return fmt.Errorf("trace has %d runs, want %d:\n got: %q\nwant: %q", len(runs), len(want), runs, blocks)
	}
	k := 0
	for bi, b := range blocks {
		got := slices.Sorted(slices.Values(runs[k : k+len(b)]))
		if exp := slices.Sorted(slices.Values(b)); !slices.Equal(got, exp) {
			return fmt.Errorf("trace block %d is %q, want %q (any order)\nwhole trace: %q", bi, runs[k:k+len(b)], b, runs)
		}
		k += len(b)
	}
	return nil
}
