package applytest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGTERMAtAnyInstant: objgc apply sent SIGTERM at a random instant of
// its first 50 ms (parsing its command line, reading its configuration,
// locking, reading and planning, the first hook running) exits 130,
// every time, and leaves nothing behind: no journal, no temporary file of
// the write-back, no doomed list, no hook still running; the model is
// whole. No hook starts after the signal.
//
// The instants count from the moment objgc registered for the signals,
// which is the first thing its code does (TestSignalsBeforePackages);
// before it only the Go runtime's own start runs. To see that moment
// objgc is started as a background job is, with SIGINT ignored: its
// SIGINT handler (/proc/PID/status SigCgt) then appears only when objgc
// registers, SIGTERM first.
//
// The test's own clock says nothing about objgc's progress: a test
// process stalled (a loaded machine, the race detector) sends its signal
// late by any amount, and a SIGTERM once the run is over is rightly no
// interrupt (exit 0). So the hooks wait at a gate (trace.sh) that the
// test opens only after the signal, once objgc has said it was
// interrupted (or has ended): whenever the signal lands, objgc cannot
// have passed its first hook, and a signal objgc lost leaves it waiting
// at the gate, silent, which fails the test.
func TestSIGTERMAtAnyInstant(t *testing.T) {
	t.Parallel()
	runs := 30
	if testing.Short() {
		runs = 6
	}
	var bad []string
	duringHook := 0 // runs whose signal landed while the first hook ran
	for i := range runs {
		e := newEnv(t)
		model := e.copyPair("app-removed.json")
		installHooks(t, e.hooks, e.readFile("m.json"), traceHook(t))
		gate := filepath.Join(e.state, "gate")
		e.touchState("gate", "")
		e.touchState("sleep", "0") // every hook traces its start, gate or not
		delay := time.Duration(rand.IntN(50_001)) * time.Microsecond
		c := exec.Command("/bin/sh", "-c", `trap '' INT; exec "$0" "$@"`, objgcBin, "apply", "--hooks-dir", e.hooks, model)
		c.Dir, c.Env = e.dir, e.environ()
		var stdout strings.Builder
		stderr := &syncBuffer{}
		c.Stdout, c.Stderr = &stdout, stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		waitCatching(t, c.Process.Pid, syscall.SIGINT)
		time.Sleep(delay) // the instant the signal lands, not a measurement
		signal(t, c, syscall.SIGTERM)
		ended := make(chan struct{})
		go func() {
			c.Wait()
			close(ended)
		}()
		if !answered(ended, stderr, time.Minute) { // a lost signal, not a measurement
			os.Remove(gate)
			c.Process.Kill()
			<-ended
			t.Fatalf("run %d, SIGTERM after %v: objgc neither ended nor said it was interrupted within a minute: the signal was lost\nstdout:\n%s\nstderr:\n%s",
				i, delay, &stdout, stderr)
		}
		openGate(t, gate, c, ended, stderr)
		if code := c.ProcessState.ExitCode(); code != 130 {
			bad = append(bad, fmt.Sprintf("run %d, SIGTERM after %v: %v\nstdout:\n%s\nstderr:\n%s", i, delay, c.ProcessState, &stdout, stderr))
			continue
		}
		var started []string
		for _, l := range e.trace() {
			if strings.HasPrefix(l, "start ") {
				started = append(started, l)
			}
		}
		// Group 2's one hook is the only one that may have started
		// before the signal: it cannot end while the gate is closed.
		if len(started) > 1 {
			t.Errorf("run %d, SIGTERM after %v: %d hooks started, the one running at the signal at most: %q", i, delay, len(started), started)
		}
		duringHook += len(started)
		if left := leftovers(e); len(left) > 0 {
			t.Errorf("run %d, SIGTERM after %v: left behind %q\n%s", i, delay, left, stderr)
		}
		if !json.Valid(e.readFile("m.json")) {
			t.Errorf("run %d, SIGTERM after %v: m.json is not JSON", i, delay)
		}
	}
	t.Logf("%d of %d signals landed while the first hook ran, the others before it", duringHook, runs)
	if len(bad) > 0 {
		t.Errorf("%d of %d runs did not exit 130:\n%s", len(bad), runs, strings.Join(bad, "\n"))
	}
}

// TestSignalsBeforePackages: objgc registers for SIGINT and SIGTERM
// before any package outside the standard library initializes (Go's
// GODEBUG=inittrace=1 lists each package's init in order): a signal
// while cobra, viper or the YAML reader initialize, or at any later
// instant, is objgc's to answer with 130.
func TestSignalsBeforePackages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, _, stderr := e.command("version")
	c.Env = append(c.Env, "GODEBUG=inittrace=1")
	if err := c.Run(); err != nil {
		t.Fatalf("objgc version: %v\n%s", err, stderr)
	}
	var before []string
	found := false
	for _, line := range strings.Split(stderr.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "init" {
			continue
		}
		if f[1] == "github.com/objgc/objgc/internal/earlysignal" {
			found = true
			break
		}
		before = append(before, f[1])
	}
	if !found {
		t.Fatalf("no init of internal/earlysignal in the inittrace:\n%s", stderr)
	}
	for _, p := range before {
		if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
			t.Errorf("package %s initializes before objgc registers for signals (before it: %q)", p, before)
		}
	}
}

// waitCatching waits until process pid runs objgc (Name in
// /proc/PID/status: a shell that execs it may catch signals of its own
// before) and catches sig (its bit in SigCgt).
func waitCatching(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			t.Fatal(err)
		}
		objgc, caught := false, false
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Name:"); ok {
				objgc = strings.TrimSpace(v) == "objgc"
			}
			if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
				mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				if err != nil {
					t.Fatalf("/proc/%d/status: %q", pid, line)
				}
				caught = mask&(1<<(sig-1)) != 0
			}
		}
		if objgc && caught {
			return
		}
		time.Sleep(50 * time.Microsecond) // polling the kernel's view, not timing objgc
	}
	t.Fatalf("pid %d did not run objgc catching %v within 30 s", pid, sig)
}

// leftovers lists what an interrupted apply must not leave: the journal,
// temporary files of the write-back beside the model, the doomed list
// in TMPDIR, and hooks still running.
func leftovers(e *env) []string {
	var out []string
	ents, _ := os.ReadDir(e.dir)
	for _, d := range ents {
		if strings.HasSuffix(d.Name(), ".journal") || strings.Contains(d.Name(), ".tmp-") {
			out = append(out, d.Name())
		}
	}
	tmp, _ := os.ReadDir(filepath.Join(e.dir, "tmp"))
	for _, d := range tmp {
		out = append(out, "tmp/"+d.Name())
	}
	running, _ := os.ReadDir(filepath.Join(e.state, "running"))
	for _, d := range running {
		out = append(out, "running hook "+d.Name())
	}
	return out
}
