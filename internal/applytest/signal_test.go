package applytest

import (
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestConcurrentApplies: while one apply runs (its hooks sleep), a second
// one on the same model exits 4 at once naming the holder; with
// --lock-timeout it waits, then runs against the model the first wrote.
func TestConcurrentApplies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	model := e.copyPair("app-removed.json")
	installHooks(t, e.hooks, e.readFile("m.json"), traceHook)
	e.touchState("sleep", "0.4")

	first, out1, err1 := e.command("apply", "--hooks-dir", e.hooks, model)
	start1 := time.Now()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the first apply's first hook", func() bool { return len(e.started()) > 0 })

	r := e.objgc("apply", "--hooks-dir", e.hooks, model)
	mustExit(t, r, 4)
	if want := "m.json.lock is held by pid " + strconv.Itoa(first.Process.Pid) + " "; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr does not name the holder (%q):\n%s", want, r.stderr)
	}
	if r.elapsed > 2*time.Second {
		t.Errorf("the second apply took %v to give up, want at once", r.elapsed)
	}
	r = e.objgc("apply", "--hooks-dir", e.hooks, "--lock-timeout", "150ms", model)
	mustExit(t, r, 4)
	if !strings.Contains(r.stderr, "(waited ") {
		t.Errorf("stderr does not say it waited:\n%s", r.stderr)
	}

	third, out3, err3 := e.command("apply", "--hooks-dir", e.hooks, "--lock-timeout", "30s", "--format", "json", model)
	start3 := time.Now()
	if err := third.Start(); err != nil {
		t.Fatal(err)
	}
	if runs := e.traceRuns(); len(runs) == 3 {
		t.Fatalf("the first apply ended before the third started: %q", runs)
	}
	// The third waits for the lock, so it reads the model the first wrote:
	// it finds nothing left to destroy.
	mustExit(t, e.wait(first, out1, err1, start1, time.Minute), 0)
	r3 := e.wait(third, out3, err3, start3, time.Minute)
	mustExit(t, r3, 0)
	if len(e.traceRuns()) != 3 {
		t.Errorf("trace %q: want the first apply's 3 destroys and nothing from the third", e.traceRuns())
	}
	rep := parseReport(t, r3)
	if len(rep.Objects) != 0 || rep.Summary.Destroyed != 0 {
		t.Errorf("the waiting apply found work in the model the first wrote: %s", r3.stdout)
	}
}

// TestInterrupt: the first SIGINT lets running hooks finish, starts no new
// one, writes the model for what completed and exits 130; a second run
// finishes the job.
func TestInterrupt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	model := e.copyPair("environment-deleted.json")
	installHooks(t, e.hooks, e.readFile("m.json"), traceHook)
	all := e.plan(model).doomed()
	e.touchState("sleep", "0.8")

	c, stdout, stderr := e.command("apply", "--hooks-dir", e.hooks, "--parallelism", "2", "--format", "json", model)
	start := time.Now()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "two hooks running", func() bool { return len(e.started()) == 2 })
	signal(t, c, syscall.SIGINT)
	r := e.wait(c, stdout, stderr, start, time.Minute)
	mustExit(t, r, 130)
	if !strings.Contains(r.stderr, "interrupted") {
		t.Errorf("stderr does not say it was interrupted:\n%s", r.stderr)
	}
	st := e.started()
	if len(st) != 2 {
		t.Fatalf("hooks started after SIGINT: %q", e.trace())
	}
	done := map[string]bool{}
	for _, l := range e.traceRuns() {
		done[strings.Fields(l)[1]] = true
	}
	for _, s := range st {
		if !done[s[2]] {
			t.Errorf("running hook of %s did not finish: trace %q", s[2], e.trace())
		}
	}
	rep := parseReport(t, r)
	if !rep.Summary.Interrupted || rep.Summary.Destroyed != 2 || rep.Summary.Pending != len(all)-2 {
		t.Errorf("summary %+v", rep.Summary)
	}
	// The model says what completed: the rest is still to destroy.
	want := maps.Clone(all)
	for id := range done {
		delete(want, id)
	}
	again := e.plan(model)
	if got := again.doomed(); !maps.Equal(got, want) {
		t.Fatalf("after the interrupted run doomed %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	if _, err := os.Stat(model + ".journal"); !os.IsNotExist(err) {
		t.Errorf("journal left after the write-back: %v", err)
	}

	if err := os.Remove(e.state + "/sleep"); err != nil {
		t.Fatal(err)
	}
	n := len(e.traceRuns())
	mustExit(t, e.objgc("apply", "--hooks-dir", e.hooks, "--parallelism", "2", model), 0)
	checkOrder(t, e.traceRuns()[n:], expectedBlocks(again, nil))
	if left := e.plan(model).doomed(); len(left) > 0 {
		t.Errorf("still doomed: %v", left)
	}
}

// TestSecondInterrupt: a second SIGINT kills the running hooks' process
// groups; the model is still written (everything stays doomed) and apply
// exits 130; a second run finishes the job.
func TestSecondInterrupt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	model := e.copyPair("environment-deleted.json")
	installHooks(t, e.hooks, e.readFile("m.json"), traceHook)
	all := e.plan(model).doomed()
	e.touchState("sleep", "30")

	c, stdout, stderr := e.command("apply", "--hooks-dir", e.hooks, "--parallelism", "2", "--format", "json", model)
	start := time.Now()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "two hooks running", func() bool { return len(e.started()) == 2 })
	signal(t, c, syscall.SIGINT)
	time.Sleep(200 * time.Millisecond)
	signal(t, c, syscall.SIGINT)
	r := e.wait(c, stdout, stderr, start, time.Minute)
	mustExit(t, r, 130)
	if r.elapsed > 10*time.Second {
		t.Errorf("apply took %v after the second SIGINT: the hooks were not killed", r.elapsed)
	}
	for _, s := range e.started() {
		if alive(s[4]) {
			t.Errorf("hook %s of %s still runs", s[4], s[2])
		}
	}
	if runs := e.traceRuns(); len(runs) != 0 {
		t.Errorf("killed hooks completed: %q", runs)
	}
	rep := parseReport(t, r)
	if !rep.Summary.Interrupted || rep.Summary.Destroyed != 0 {
		t.Errorf("summary %+v", rep.Summary)
	}
	for _, o := range rep.Objects {
		if o.State == "failed" && !strings.Contains(o.Error, "interrupted") {
			t.Errorf("%s failed with %q, want it to say interrupted", o.ID, o.Error)
		}
	}
	if got := e.plan(model).doomed(); !maps.Equal(got, all) {
		t.Fatalf("after the killed run doomed %v, want all %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(all)))
	}

	if err := os.Remove(e.state + "/sleep"); err != nil {
		t.Fatal(err)
	}
	mustExit(t, e.objgc("apply", "--hooks-dir", e.hooks, "--parallelism", "2", model), 0)
	if left := e.plan(model).doomed(); len(left) > 0 {
		t.Errorf("still doomed: %v", left)
	}
}

// TestInterruptDuringNotifications: after the first SIGINT no new hook
// starts, also when the interrupted hook is a notification and more
// notifications of its group wait for a free slot.
func TestInterruptDuringNotifications(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	model := e.generatedModel(200)
	installHooks(t, e.hooks, e.readFile("m.json"), traceHook)
	p := e.plan(model)
	perGroup := map[int]int{}
	for _, n := range p.Notifications {
		perGroup[n.Group]++
	}
	e.touchState("sleep", "0.3")

	c, stdout, stderr := e.command("apply", "--hooks-dir", e.hooks, "--parallelism", "1", model)
	start := time.Now()
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
	r := e.wait(c, stdout, stderr, start, time.Minute)
	mustExit(t, r, 130)
	if st := e.started(); len(st) != running {
		t.Errorf("%d hooks started, want only the %d started before SIGINT: %q", len(st), running, e.trace())
	}
	if got := e.plan(model).doomed(); !maps.Equal(got, p.doomed()) {
		t.Errorf("an interrupted notification phase changed what is doomed")
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid string) bool {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || !strings.HasPrefix(string(stat[i+1:]), " Z")
}
