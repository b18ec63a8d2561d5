package applytest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestPlanInterruptedInEveryStage: SIGINT or SIGTERM stops objgc plan with
// exit 130 whatever stage it is in (reading, comparing, ordering, looking
// up hooks, rendering), on a model large enough that each stage takes a
// while: a stage that did not look at the signal would run to its end and
// let the plan exit 0.
//
// The test sees the plan from outside only (inotify, /proc). Three
// stages show: the plan opens its model as it starts reading, it opens
// the package cache's directory (an empty one here) as it starts looking
// up hooks, and it writes its first byte of output as it renders. The
// comparing and the ordering show nothing: the test signals those cases
// when the plan has used most of the CPU time (/proc/PID/stat) that a
// first, uninterrupted run used until its hook lookup, the reading being
// the larger part of it; each such case says whether the hook lookup had
// started. After the signal the plan has 5 seconds to exit: promptness is
// the requirement here, so the bound is an assertion on it, generous, as
// the machine may be busy.
func TestPlanInterruptedInEveryStage(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 300,000-object model")
	}
	t.Parallel()
	e := newEnv(t)
	model := e.generatedModel(300_000)
	cacheDir := filepath.Join(e.dir, "xdg", "cache") // OBJGC_CACHE_DIR
	for _, d := range []string{e.hooks, cacheDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ref := startPlan(t, e, model, cacheDir)
	ref.waitFor(ref.hooks, "open its package cache")
	hooksCPU := ref.cpu()
	ref.waitFor(ref.first, "write its plan")
	if err := ref.wait(time.Minute); err != nil || ref.code != 0 {
		t.Fatalf("uninterrupted plan: exit %d, %v; stderr:\n%s", ref.code, err, ref.stderr.String())
	}
	t.Logf("uninterrupted plan: hook lookup after %v of CPU time", hooksCPU)

	cases := []struct {
		stage string
		share float64 // of hooksCPU, for the stages that do not show
		sig   syscall.Signal
	}{
		{"read", 0, syscall.SIGINT},
		{"read", 0.25, syscall.SIGTERM},
		{"compare-or-order", 0.85, syscall.SIGTERM},
		{"compare-or-order", 0.95, syscall.SIGINT},
		{"hooks", 0, syscall.SIGTERM},
		{"render", 0, syscall.SIGINT},
		{"render", 0, syscall.SIGTERM},
	}
	for _, tc := range cases {
		t.Run(tc.stage+"-"+tc.sig.String(), func(t *testing.T) {
			r := startPlan(t, e, model, cacheDir)
			switch tc.stage {
			case "hooks":
				r.waitFor(r.hooks, "open its package cache")
			case "render":
				r.waitFor(r.first, "write its plan")
			default:
				r.waitFor(r.opened, "open its model")
				for !done(r.eof) && r.cpu() < time.Duration(tc.share*float64(hooksCPU)) {
					time.Sleep(2 * time.Millisecond)
				}
			}
			if done(r.eof) {
				r.wait(time.Minute)
				t.Skipf("the plan ended (exit %d) before the signal", r.code)
			}
			if tc.share > 0 && done(r.hooks) {
				t.Logf("the hook lookup had started: a signal in stage hooks or later")
			}
			if err := r.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			if err := r.wait(5 * time.Second); err != nil {
				t.Fatalf("%v in stage %s: %v", tc.sig, tc.stage, err)
			}
			if r.code != 130 {
				t.Fatalf("%v in stage %s: exit %d, want 130; stderr:\n%s", tc.sig, tc.stage, r.code, r.stderr.String())
			}
			if !bytes.Contains(r.stderr.Bytes(), []byte("objgc: interrupted")) {
				t.Errorf("stderr does not say it was interrupted:\n%s", r.stderr.String())
			}
			t.Logf("%v in stage %s: exit 130 after %v", tc.sig, tc.stage, time.Since(sent).Round(time.Millisecond))
		})
	}
}

// plannedRun is objgc plan --format json running on a model, watched from
// outside.
type plannedRun struct {
	t      *testing.T
	cmd    *exec.Cmd
	opened <-chan struct{} // closed once the plan opened its model
	hooks  <-chan struct{} // closed once it opened the package cache
	first  chan struct{}   // closed at its first byte of output
	eof    chan struct{}   // closed when its output ends
	stderr bytes.Buffer
	code   int
}

// startPlan starts objgc plan --format json on model, with e's hooks
// directory and cacheDir as its package cache.
func startPlan(t *testing.T, e *env, model, cacheDir string) *plannedRun {
	t.Helper()
	r := &plannedRun{t: t, first: make(chan struct{}), eof: make(chan struct{})}
	r.opened, r.hooks = watchOpen(t, model), watchOpen(t, cacheDir)
	r.cmd = exec.Command(objgcBin, "plan", "--format", "json", "--hooks-dir", e.hooks, model)
	r.cmd.Dir = e.dir
	r.cmd.Env = e.environ()
	r.cmd.Stderr = &r.stderr
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			r.cmd.Process.Kill()
			r.cmd.Wait()
		}
	})
	go func() {
		defer close(r.eof)
		b := make([]byte, 1)
		if n, _ := stdout.Read(b); n == 0 {
			return
		}
		close(r.first)
		io.Copy(io.Discard, stdout)
	}()
	return r
}

// watchOpen returns a channel closed when path is next opened (inotify
// IN_OPEN), by anyone: the test opens neither the model nor the cache.
func watchOpen(t *testing.T, path string) <-chan struct{} {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_OPEN); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "inotify "+path) // non-blocking: Close ends a Read
	t.Cleanup(func() { f.Close() })
	ch := make(chan struct{})
	go func() {
		if n, _ := f.Read(make([]byte, 4096)); n > 0 {
			close(ch)
		}
	}()
	return ch
}

// waitFor waits until ch is closed, failing the test when the plan ends
// first or a minute passes.
func (r *plannedRun) waitFor(ch <-chan struct{}, what string) {
	r.t.Helper()
	select {
	case <-ch:
		return
	case <-r.eof:
		select {
		case <-ch:
			return
		default:
		}
	case <-time.After(time.Minute):
	}
	r.t.Fatalf("the plan did not %s; stderr:\n%s", what, r.stderr.String())
}

// cpu returns the CPU time the plan has used (user and system, of all its
// threads: /proc/PID/stat), 0 once it has ended.
func (r *plannedRun) cpu() time.Duration {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(r.cmd.Process.Pid), "stat"))
	if err != nil {
		return 0
	}
	// The fields after the command name, which ends at the last ")":
	// utime and stime are the 12th and 13th, in clock ticks (100 a
	// second on Linux, whatever the kernel's own rate).
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// wait allows the plan d to exit (its output ends when it does), then
// sets its exit code.
func (r *plannedRun) wait(d time.Duration) error {
	select {
	case <-r.eof:
	case <-time.After(d):
		r.cmd.Process.Kill()
		r.cmd.Wait()
		return fmt.Errorf("plan still running %v later", d)
	}
	err := r.cmd.Wait()
	r.code = r.cmd.ProcessState.ExitCode()
	if _, ok := err.(*exec.ExitError); ok {
		err = nil
	}
	return err
}

// done reports whether ch is closed.
func done(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
