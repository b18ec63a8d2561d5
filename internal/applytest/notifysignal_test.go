package applytest

import (
	"maps"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/objgc/objgc/internal/hooktest"
)

// started returns the trace's "start" lines: "start <event> <id> <group> <pid>".
func (e *env) started() [][]string {
	var out [][]string
	for _, l := range e.trace() {
		if strings.HasPrefix(l, "start ") {
			out = append(out, strings.Fields(l))
		}
	}
	return out
}

// TestInterruptDuringNotifications: after the first SIGINT no new hook
// starts, also when the interrupted hook is a notification and more
// notifications of its group wait for a free slot.
func TestInterruptDuringNotifications(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	model := e.generatedModel(200)
	installHooks(t, e.hooks, e.readFile("m.json"), traceHook(t))
	p := e.plan(model)
	perGroup := map[int]int{}
	for _, n := range p.Notifications {
		perGroup[n.Group]++
	}
	e.touchState("sleep", "0.3")

	c, stdout, stderr := e.command("apply", "--hooks-dir", e.hooks, "--parallelism", "1", model)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt a notification whose group has more waiting for the slot.
	var running int
	waitFor(t, 20*time.Second, "a notification of a group of several running", func() bool {
		st := e.started()
		if len(st) == 0 {
			return false
		}
		g, _ := strconv.Atoi(st[len(st)-1][3])
		running = len(st)
		return perGroup[g] >= 2
	})
	signal(t, c, syscall.SIGINT)
	r := e.wait(c, stdout, stderr, time.Minute)
	mustExit(t, r, 130)
	if st := e.started(); len(st) != running {
		t.Errorf("%d hooks started, want only the %d started before SIGINT: %q", len(st), running, e.trace())
	}
	if got := hooktest.Doomed(e.plan(model)); !maps.Equal(got, hooktest.Doomed(p)) {
		t.Errorf("an interrupted notification phase changed what is doomed")
	}
}
