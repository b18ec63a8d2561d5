package applytest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// blockHook, a destroy hook, traces "start <id>" and "done <id>"; while
// the state file block.<id> exists it waits before it is done. As a
// notify hook it does nothing.
const blockHook = `#!/bin/sh
[ "$OBJGC_EVENT" = destroy ] || exit 0
S=$OBJGC_TEST_STATE
echo "start $2" >> "$S/trace"
while [ -e "$S/block.$2" ]; do sleep 0.01; done
echo "done $2" >> "$S/trace"
`

// TestDoneHookNotRunAfterKill: objgc apply, one hook at a time, is killed
// with SIGKILL while the last object's destroy hook runs, after every
// other hook has ended and the journal recorded it. The next run resumes:
// it runs the interrupted hook again and none of the others.
func TestDoneHookNotRunAfterKill(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	model := e.copyPair("environment-deleted.json")
	installHooks(t, e.hooks, e.readFile("m.json"), blockHook)
	p := e.plan(model)
	var order []string // destroy order
	for _, g := range p.Groups {
		for _, o := range g.Objects {
			order = append(order, o.ID)
		}
	}
	if len(order) < 3 {
		t.Fatalf("plan destroys %d objects, want at least 3", len(order))
	}
	last := order[len(order)-1]
	e.touchState("block."+last, "")

	args := []string{"apply", "--hooks-dir", e.hooks, "--parallelism", "1", model}
	c, stdout, stderr := e.command(args...)
	start := time.Now()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the last object's hook to start", func() bool {
		return slices.Contains(e.trace(), "start "+last)
	})
	ended := journalEnded(t, model+".journal")
	for _, id := range order[:len(order)-1] {
		if !ended[id+" destroy -"] {
			t.Fatalf("the journal has no end record of %s's hook while a later group's hook runs", id)
		}
	}
	signal(t, c, syscall.SIGKILL)
	mustExit(t, e.wait(c, stdout, stderr, start, time.Minute), -1)
	// The killed run's hook is still waiting: let it finish.
	if err := os.Remove(filepath.Join(e.state, "block."+last)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the orphaned hook to end", func() bool {
		return slices.Contains(e.trace(), "done "+last)
	})

	r := e.objgc(args...)
	mustExit(t, r, 0)
	if !strings.Contains(r.stderr, "resuming the run started") {
		t.Errorf("the second run did not resume:\n%s", r.stderr)
	}
	starts := map[string]int{}
	for _, l := range e.trace() {
		if id, ok := strings.CutPrefix(l, "start "); ok {
			starts[id]++
		}
	}
	for _, id := range order[:len(order)-1] {
		if starts[id] != 1 {
			t.Errorf("hook of %s started %d times, want once: the journal recorded it done before the kill", id, starts[id])
		}
	}
	if starts[last] != 2 {
		t.Errorf("hook of %s started %d times, want twice (killed while it ran, run again)", last, starts[last])
	}
	if _, err := os.Stat(model + ".journal"); !os.IsNotExist(err) {
		t.Errorf("journal left after the resumed run: %v", err)
	}
}

// holdsOpen reports whether process pid has path open (Linux /proc).
func holdsOpen(pid int, path string) bool {
	fds, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if to, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name())); err == nil && to == path {
			return true
		}
	}
	return false
}

// TestLockWaitEndsWithSignal: another process (flock(1)) holds the
// target's lock; objgc apply --lock-timeout 1h waits for it, and the first
// SIGINT, or SIGTERM, ends the wait: exit 130, nothing done.
func TestLockWaitEndsWithSignal(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc")
	}
	flock, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("no flock(1)")
	}
	t.Parallel()
	e := newEnv(t)
	model := e.copyPair("app-removed.json")
	installHooks(t, e.hooks, e.readFile("m.json"), traceHook)
	old := e.readFile("m.json")
	holder := exec.Command(flock, model+".lock", "sh", "-c", "echo locked; exec cat")
	holder.Dir = e.dir
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); holder.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
		t.Fatalf("flock(1) said %q, %v", line, err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		c, stdout, stderr := e.command("apply", "--hooks-dir", e.hooks, "--lock-timeout", "1h", model)
		start := time.Now()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "objgc to open the lock file", func() bool { return holdsOpen(c.Process.Pid, model+".lock") })
		signal(t, c, sig)
		r := e.wait(c, stdout, stderr, start, 30*time.Second)
		mustExit(t, r, 130)
		if want := "objgc: interrupted while waiting for the lock " + model + ".lock"; !strings.Contains(r.stderr, want) {
			t.Errorf("%v: stderr %q, want %q", sig, r.stderr, want)
		}
	}
	if len(e.trace()) != 0 || !bytes.Equal(e.readFile("m.json"), old) {
		t.Errorf("a hook ran or the model changed: trace %q", e.trace())
	}
	if _, err := os.Stat(model + ".journal"); !os.IsNotExist(err) {
		t.Errorf("a journal was created: %v", err)
	}
}
