package applytest

import (
	"maps"
	"os"
	"path/filepath"
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
//
// The moment comes from the plan of a generated model: the first
// notification (in the plan's order, which --parallelism 1 runs) of a
// group that has several. Its hook is held at a gate of its own
// (trace.sh's gate.<id>.<event>) from its start until objgc has said it
// was interrupted; only then does the test open the gate. So the signal
// lands while that notification runs and the rest of its group waits for
// its slot, however slow the machine; every hook traces its start
// ("sleep" 0), so a hook objgc starts after the signal fails the test.
func TestInterruptDuringNotifications(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	model := e.generatedModel(200)
	installHooks(t, e.hooks, e.readFile("m.json"), traceHook(t))
	p := e.plan(model)
	perGroup := map[int]int{}
	hooks := map[string]int{} // a notification's hook run: "<publisher> <handler>"
	for _, n := range p.Notifications {
		perGroup[n.Group]++
		hooks[n.Publisher+" "+n.Handler]++
	}
	target := -1
	for i, n := range p.Notifications {
		if perGroup[n.Group] >= 2 && hooks[n.Publisher+" "+n.Handler] == 1 {
			target = i
			break
		}
	}
	if target < 0 {
		t.Fatalf("the generated model's plan has no group of several notifications: %+v", p.Notifications)
	}
	n := p.Notifications[target]
	gate := filepath.Join(e.state, "gate."+n.Publisher+"."+n.Handler)
	e.touchState(filepath.Base(gate), "")
	e.touchState("sleep", "0")

	c, stdout, _ := e.command("apply", "--hooks-dir", e.hooks, "--parallelism", "1", model)
	stderr := &syncBuffer{}
	c.Stderr = stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() {
		c.Wait()
		close(ended)
	}()
	defer func() {
		os.Remove(gate)
		select {
		case <-ended:
		case <-time.After(time.Minute): // a hang, not a measurement
			c.Process.Kill()
			<-ended
		}
	}()
	held := func(st []string) bool { return st[1] == n.Handler && st[2] == n.Publisher }
	var running int
	waitFor(t, time.Minute, "the chosen notification to start", func() bool {
		st := e.started()
		running = len(st)
		return running > 0 && held(st[running-1])
	})
	// The rest of its group has not started: it waits for the slot.
	waiting := perGroup[n.Group]
	for _, st := range e.started() {
		if st[3] == strconv.Itoa(n.Group) {
			waiting--
		}
	}
	if waiting < 1 {
		t.Fatalf("every notification of group %d started before the chosen one: %q", n.Group, e.trace())
	}
	signal(t, c, syscall.SIGINT)
	if !answered(ended, stderr, time.Minute) { // a lost signal, not a measurement
		t.Fatalf("objgc neither ended nor said it was interrupted within a minute of SIGINT\nstderr:\n%s", stderr)
	}
	openGate(t, gate, c, ended, stderr)
	mustExit(t, result{code: c.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}, 130)
	if st := e.started(); len(st) != running {
		t.Errorf("%d hooks started, want only the %d started before SIGINT: %q", len(st), running, e.trace())
	}
	if got := hooktest.Doomed(e.plan(model)); !maps.Equal(got, hooktest.Doomed(p)) {
		t.Errorf("an interrupted notification phase changed what is doomed")
	}
}
