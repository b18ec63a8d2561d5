package applytest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/objgc/objgc/destroy/planfile"
	"github.com/objgc/objgc/internal/hooktest"
	"github.com/objgc/objgc/internal/testbin"
)

// objgcBin is the objgc binary TestMain built.
var objgcBin string

// repoRoot is the module's root directory.
var repoRoot string

func TestMain(m *testing.M) {
	if code, ok := peakParent(); ok {
		os.Exit(code) // this binary run by TestPlanMemoryBound
	}
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	repoRoot = testbin.Root()
	var remove func()
	var err error
	objgcBin, remove, err = testbin.Build("objgc-applytest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer remove()
	return m.Run()
}

// env is a test's world: a work directory holding the model, the hooks,
// and the state the hook scripts share with the test.
type env struct {
	t     *testing.T
	dir   string // work directory, objgc's working directory
	state string // OBJGC_TEST_STATE: trace, fail/, barrier.*, ...
	hooks string // --hooks-dir
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, dir: dir, state: filepath.Join(dir, "state"), hooks: filepath.Join(dir, "hooks")}
	for _, d := range []string{e.state, filepath.Join(e.state, "fail"), e.hooks, filepath.Join(dir, "xdg")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// path returns name inside the work directory.
func (e *env) path(name string) string { return filepath.Join(e.dir, name) }

// environ is objgc's environment: isolated from the user's configuration
// and package cache, plus what the hook scripts read.
func (e *env) environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OBJGC_") || strings.HasPrefix(kv, "XDG_") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "TMPDIR=") {
			continue
		}
		out = append(out, kv)
	}
	xdg := filepath.Join(e.dir, "xdg")
	// A run killed mid-way leaves its temporary files (the doomed list):
	// in the test's directory, they go with it.
	tmp := filepath.Join(e.dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		panic(err)
	}
	return append(out,
		"TMPDIR="+tmp,
		"HOME="+xdg,
		"XDG_CONFIG_HOME="+xdg,
		"XDG_CACHE_HOME="+xdg,
		"OBJGC_CACHE_DIR="+filepath.Join(xdg, "cache"),
		"OBJGC_TEST_STATE="+e.state,
		"NO_COLOR=1",
	)
}

// result is one objgc run.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// command returns objgc with args, ready to start in the work directory.
func (e *env) command(args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	c := exec.Command(objgcBin, args...)
	c.Dir = e.dir
	c.Env = e.environ()
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	return c, &stdout, &stderr
}

// objgc runs objgc with args and waits (at most a minute) for it.
func (e *env) objgc(args ...string) result {
	e.t.Helper()
	c, stdout, stderr := e.command(args...)
	if err := c.Start(); err != nil {
		e.t.Fatal(err)
	}
	return e.wait(c, stdout, stderr, time.Minute)
}

// wait waits for c, killing it after limit.
func (e *env) wait(c *exec.Cmd, stdout, stderr *bytes.Buffer, limit time.Duration) result {
	e.t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(limit):
		c.Process.Kill()
		<-done
		e.t.Fatalf("objgc %q did not end within %v\nstdout:\n%s\nstderr:\n%s", c.Args[1:], limit, stdout, stderr)
	}
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode() // -1 when killed by a signal
	default:
		e.t.Fatalf("objgc %q: %v\n%s", c.Args[1:], err, r)
	}
	return r
}

// mustExit fails the test unless r exited with code.
func mustExit(t *testing.T, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("want exit %d, got %s", code, r)
	}
}

// copyPair copies testdata/pairs/<name> to the work directory as m.json
// and returns its path.
func (e *env) copyPair(name string) string {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "pairs", name))
	if err != nil {
		e.t.Fatal(err)
	}
	return e.writeFile("m.json", data)
}

func (e *env) writeFile(name string, data []byte) string {
	e.t.Helper()
	p := e.path(name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) readFile(name string) []byte {
	e.t.Helper()
	data, err := os.ReadFile(e.path(name))
	if err != nil {
		e.t.Fatal(err)
	}
	return data
}

// touchState writes a state file the hooks read (relative to the state
// directory).
func (e *env) touchState(name, content string) {
	e.t.Helper()
	p := filepath.Join(e.state, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// traceHook is the hook every class gets unless a test says otherwise:
// testdata/hooks/scripts/trace.sh, the hook of the apply scripts too (its
// comment says what it appends to $OBJGC_TEST_STATE/trace and the files
// there it obeys: running/, barrier.<group>, sleep, fail/<id>, ...).
func traceHook(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hooks", "scripts", "trace.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// installHooks gives every class and handler of model the hook script
// (hooktest.Install).
func installHooks(t *testing.T, dir string, model []byte, script string) {
	t.Helper()
	if err := hooktest.Install(dir, model, []byte(script)); err != nil {
		t.Fatal(err)
	}
}

// trace returns the lines of the trace file.
func (e *env) trace() []string {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.state, "trace"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// traceRuns returns the trace's completion lines ("<event> <id> <group>"),
// without start, OVERLAP and BARRIER-TIMEOUT lines.
func (e *env) traceRuns() []string {
	var out []string
	for _, l := range e.trace() {
		if l == "" || strings.HasPrefix(l, "start ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// planDoc is the part of objgc plan --format json the tests read.
type planDoc = planfile.File

// plan runs objgc plan --format json with args.
func (e *env) plan(args ...string) *planDoc {
	e.t.Helper()
	r := e.objgc(append([]string{"plan", "--format", "json", "--hooks-dir", e.hooks}, args...)...)
	mustExit(e.t, r, 0)
	p, err := planfile.Parse("plan output", []byte(r.stdout))
	if err != nil || p == nil {
		e.t.Fatalf("plan output: %v\n%s", err, r.stdout)
	}
	return p
}

// report is objgc apply --format json's report.
type report struct {
	Objects []struct {
		ID        string  `json:"id"`
		Group     int     `json:"group"`
		State     string  `json:"state"`
		BlockedBy *string `json:"blocked_by"`
		Error     string  `json:"error"`
		Hooks     []struct {
			Hook       string `json:"path"`
			Resumed    bool   `json:"resumed"`
			ExitCode   int    `json:"exit_code"`
			Error      string `json:"error"`
			StderrTail string `json:"stderr_tail"`
		} `json:"hooks"`
	} `json:"objects"`
	Summary struct {
		Destroyed   int  `json:"destroyed"`
		Failed      int  `json:"failed"`
		Blocked     int  `json:"blocked"`
		Pending     int  `json:"pending"`
		Interrupted bool `json:"interrupted"`
	} `json:"summary"`
}

func parseReport(t *testing.T, r result) *report {
	t.Helper()
	var rep report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("apply report: %v\n%s", err, r)
	}
	return &rep
}

// states returns the report's objects' states by id.
func (rep *report) states() map[string]string {
	out := map[string]string{}
	for _, o := range rep.Objects {
		out[o.ID] = o.State
	}
	return out
}

// signal sends sig to the process.
func signal(t *testing.T, c *exec.Cmd, sig syscall.Signal) {
	t.Helper()
	if err := c.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond every 10 ms until it holds or d has passed.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waited %v for %s", d, what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
