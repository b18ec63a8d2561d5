package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/destroy/order"
)

// errNotApproved ends an apply whose plan was not approved at the
// terminal: nothing was done (exit 1).
var errNotApproved = errors.New("apply cancelled: nothing was done")

// maxApprovalObjects is how many objects the question lists before it
// says how many more there are.
const maxApprovalObjects = 10

// askApproval shows, on stderr, the summary of the plan prep that apply
// MODEL is about to carry out (what it destroys, notifies and drops, and
// a warning when the whole environment is destroyed) and asks, as
// Terraform's apply does, for "yes" on standard input (a terminal).
// Anything else, or the end of input, is errNotApproved.
func askApproval(streams *IO, ai *applyInputs, prep *destroy.Prepared) error {
	p := prep.Plan
	var b strings.Builder
	fmt.Fprintf(&b, "objgc apply %s will:\n", term(ai.named))
	if n := len(p.Objects); n > 0 {
		fmt.Fprintf(&b, "  destroy %d %s in %d %s, deepest first, running their destroy hooks:\n", n, plural(n, "object", "objects"), len(p.Groups), plural(len(p.Groups), "group", "groups"))
		shown := 0
		for _, g := range p.Groups {
			for _, i := range g.Objects {
				if shown == maxApprovalObjects {
					break
				}
				o := p.Header(int(i))
				fmt.Fprintf(&b, "    %s %s (group %d)\n", term(orDash(o.Type)), term(o.ID), g.Index)
				shown++
			}
		}
		if n > shown {
			fmt.Fprintf(&b, "    and %d more (objgc plan lists them all)\n", n-shown)
		}
	}
	if n := len(p.Notifications); n > 0 {
		fmt.Fprintf(&b, "  run %d %s before that\n", n, plural(n, "notification", "notifications"))
	}
	if n := len(p.Diff.Dropped); n > 0 {
		fmt.Fprintf(&b, "  drop %d %s destroyed before, without hooks\n", n, plural(n, "object", "objects"))
	}
	if n := prep.Hooks.WithoutDestroyHook(); n > 0 {
		fmt.Fprintf(&b, "  %d of them %s no destroy hook: %s dropped from the model without anything being destroyed\n", n, plural(n, "has", "have"), plural(n, "it is", "they are"))
	}
	for k := range p.WarningCount() {
		if w := p.Warning(k); w.Code == order.WarnEnvironmentDestroyed {
			fmt.Fprintf(&b, "  warning: %s\n", term(w.Message))
		}
	}
	b.WriteString("Destroy them? Only 'yes' goes on (--auto-approve does not ask): ")
	fmt.Fprint(streams.Err, b.String())
	line, err := bufio.NewReader(interruptible(streams.In, streams.Interrupt)).ReadString('\n')
	switch {
	case err != nil && line == "" && errors.Is(err, destroy.ErrInterrupted):
		fmt.Fprintln(streams.Err)
		return fmt.Errorf("%w before the lock was taken; nothing was done", destroy.ErrInterrupted)
	case strings.TrimSpace(line) != "yes":
		if err != nil {
			fmt.Fprintln(streams.Err) // the answer's line was not ended
		}
		return errNotApproved
	}
	return nil
}
