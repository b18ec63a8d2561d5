package applytest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/objgc/objgc/internal/hooktest"
)

// pairs are the real models of testdata/pairs.
func pairs(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "pairs", "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no pairs: %v", err)
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	return names
}

// TestTraceOrder applies every real pair with hooks for every class and
// handler, and checks that the hooks ran in the plan's order:
// notifications first, group by group, then the destroy groups in order,
// any order within a group. With --parallelism 4, a barrier in the hooks
// proves that the objects of one group run at the same time, and a
// "running" marker that hooks of two groups never do.
func TestTraceOrder(t *testing.T) {
	for _, pair := range pairs(t) {
		for _, par := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/parallelism=%d", strings.TrimSuffix(pair, ".json"), par), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				model := e.copyPair(pair)
				installHooks(t, e.hooks, e.readFile("m.json"), traceHook(t))
				args := []string{model}
				if pair == "dangling-reference.json" {
					args = append(args, "--on-dangling=keep")
				}
				p := e.plan(args...)
				if err := os.Mkdir(filepath.Join(e.state, "running"), 0o755); err != nil {
					t.Fatal(err)
				}
				for _, g := range p.Groups {
					e.touchState("barrier."+strconv.Itoa(g.Index), strconv.Itoa(min(par, len(g.Objects))))
				}

				r := e.objgc(append([]string{"apply", "--hooks-dir", e.hooks, "--parallelism", strconv.Itoa(par)}, args...)...)
				mustExit(t, r, 0)
				for _, l := range e.trace() {
					if strings.HasPrefix(l, "OVERLAP") || strings.HasPrefix(l, "BARRIER-TIMEOUT") {
						t.Errorf("%s\nwhole trace: %q", l, e.trace())
					}
				}
				if err := hooktest.CheckOrder(e.traceRuns(), hooktest.ExpectedBlocks(p, nil)); err != nil {
					t.Fatal(err)
				}

				// Nothing is left to destroy; a second apply runs no hook.
				if left := hooktest.Doomed(e.plan(model)); len(left) > 0 {
					t.Errorf("after apply, still doomed: %v", left)
				}
				n := len(e.trace())
				mustExit(t, e.objgc("apply", "--hooks-dir", e.hooks, model), 0)
				if len(e.trace()) != n {
					t.Errorf("a second apply ran hooks: %q", e.trace()[n:])
				}
				if _, err := os.Stat(model + ".journal"); !os.IsNotExist(err) {
					t.Errorf("journal left behind: %v", err)
				}
			})
		}
	}
}
