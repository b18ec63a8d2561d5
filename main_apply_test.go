package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/tidwall/gjson"

	"github.com/objgc/objgc/destroy/planfile"
	"github.com/objgc/objgc/internal/hooktest"
)

// The commands of this file drive objgc apply end to end in scripts: real
// processes started in the background and signalled, real hook scripts,
// real flock(2) held by a helper process.

// applyCmds are the script commands of this file.
var applyCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"bg":         cmdBg,
	"signal":     cmdSignal,
	"waitexit":   cmdWaitexit,
	"waitfor":    cmdWaitfor,
	"hooks":      cmdHooks,
	"doomed":     cmdDoomed,
	"traceorder": cmdTraceorder,
	"traceruns":  cmdTraceruns,
	"json":       cmdJSON,
	"alive":      cmdAlive,
	"undeploy":   cmdUndeploy,
	"waitopen":   cmdWaitopen,
	"partition":  cmdPartition,
	"planedit":   cmdPlanedit,
}

// waitLimit bounds every wait of a script for a process or a file: a
// script that would wait longer has hung, and fails saying what it
// waited for. It is a bound, not a measurement: no assertion depends on
// how long anything took.
const waitLimit = time.Minute

// bgEnvKey is the testscript value (Env.Values) holding the names of the
// variables Setup gave the script: bg passes them to its process.
type bgEnvKey struct{}

// bgProc is a process bg started.
type bgProc struct {
	cmd            *exec.Cmd
	done           chan struct{} // closed when Wait returned
	err            error         // Wait's error, once done is closed
	stdout, stderr string        // files its output goes to
}

var (
	bgMu    sync.Mutex
	bgProcs = map[*testscript.TestScript]map[string]*bgProc{}
)

// cmdBg starts a program in the background: bg NAME [VAR=VALUE...]
// PROGRAM [ARGS...]. Unlike exec's &NAME&, the process can be sent any
// signal (signal) and its exact exit status asserted (waitexit). Its
// stdout and stderr go to .bg/NAME.stdout and .bg/NAME.stderr in the
// work directory as it runs (so that waitfor can watch them); $NAME_PID
// is its pid. Its environment is the one Setup gave the script plus the
// VAR=VALUE arguments (variables set with env are not passed). It is
// killed when the script ends.
func cmdBg(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: bg NAME [VAR=VALUE...] PROGRAM [ARGS...]")
	}
	name, args := args[0], args[1:]
	var env []string
	for _, n := range ts.Value(bgEnvKey{}).([]string) {
		env = append(env, n+"="+ts.Getenv(n))
	}
	for len(args) > 0 && strings.Contains(args[0], "=") {
		env = append(env, args[0])
		args = args[1:]
	}
	if len(args) == 0 {
		ts.Fatalf("bg %s: no program", name)
	}
	prog := args[0]
	if !strings.Contains(prog, "/") {
		p, err := lookPath(prog, ts.Getenv("PATH"))
		ts.Check(err)
		prog = p
	}
	dir := ts.MkAbs(".bg")
	ts.Check(os.MkdirAll(dir, 0o755))
	p := &bgProc{done: make(chan struct{}), stdout: filepath.Join(dir, name+".stdout"), stderr: filepath.Join(dir, name+".stderr")}
	out, err := os.Create(p.stdout)
	ts.Check(err)
	errf, err := os.Create(p.stderr)
	ts.Check(err)
	p.cmd = exec.Command(prog, args[1:]...)
	p.cmd.Args[0] = args[0]
	p.cmd.Dir = ts.MkAbs(".")
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = out, errf
	bgMu.Lock()
	procs := bgProcs[ts]
	if procs == nil {
		procs = map[string]*bgProc{}
		bgProcs[ts] = procs
		ts.Defer(func() {
			bgMu.Lock()
			defer bgMu.Unlock()
			for _, p := range bgProcs[ts] {
				p.cmd.Process.Kill()
				<-p.done
			}
			delete(bgProcs, ts)
		})
	}
	if procs[name] != nil {
		bgMu.Unlock()
		ts.Fatalf("bg: a process named %s was started already", name)
	}
	err = p.cmd.Start()
	if err == nil {
		procs[name] = p
	}
	bgMu.Unlock()
	out.Close()
	errf.Close()
	ts.Check(err)
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	ts.Setenv(name+"_PID", strconv.Itoa(p.cmd.Process.Pid))
}

func lookPath(prog, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("bg: %s not found in $PATH", prog)
}

func findBg(ts *testscript.TestScript, name string) *bgProc {
	bgMu.Lock()
	defer bgMu.Unlock()
	p := bgProcs[ts][name]
	if p == nil {
		ts.Fatalf("no background process %s (start it with bg)", name)
	}
	return p
}

var signals = map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "HUP": syscall.SIGHUP}

// cmdSignal sends a signal to a process bg started: signal NAME INT|TERM|KILL|HUP.
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: signal NAME INT|TERM|KILL|HUP")
	}
	sig, ok := signals[args[1]]
	if !ok {
		ts.Fatalf("signal: unknown signal %q", args[1])
	}
	ts.Check(findBg(ts, args[0]).cmd.Process.Signal(sig))
}

// cmdWaitexit waits for a process bg started and asserts its exit
// status: waitexit NAME STATUS, where STATUS is a number or KILL for a
// process that SIGKILL ended. Its stdout and stderr become the script's
// stdout and stderr, for the stdout, stderr and cmp commands that follow.
func cmdWaitexit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitexit NAME STATUS|KILL")
	}
	p := findBg(ts, args[0])
	select {
	case <-p.done:
	case <-time.After(waitLimit):
		p.cmd.Process.Kill()
		<-p.done
		ts.Fatalf("%s did not end within %v", args[0], waitLimit)
	}
	out, err := os.ReadFile(p.stdout)
	ts.Check(err)
	errb, err := os.ReadFile(p.stderr)
	ts.Check(err)
	ts.Stdout().Write(out)
	ts.Stderr().Write(errb)
	got := "0"
	var ee *exec.ExitError
	switch {
	case p.err == nil:
	case errors.As(p.err, &ee):
		got = strconv.Itoa(ee.ExitCode())
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			got = strings.TrimPrefix(signalName(ws.Signal()), "SIG")
		}
	default:
		ts.Fatalf("waitexit %s: %v", args[0], p.err)
	}
	if got != args[1] {
		ts.Fatalf("%s ended with %s, want %s\nstderr:\n%s", args[0], got, args[1], errb)
	}
}

func signalName(s syscall.Signal) string {
	for n, sig := range signals {
		if sig == s {
			return n
		}
	}
	return s.String()
}

// cmdWaitfor waits until a file has at least N lines (1 when not given)
// matching a regular expression: waitfor FILE REGEXP [N]. A missing file
// has none. It polls every 10 ms, for at most a minute.
func cmdWaitfor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: waitfor FILE REGEXP [N]")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	n := 1
	if len(args) == 3 {
		if n, err = strconv.Atoi(args[2]); err != nil {
			ts.Fatalf("waitfor: bad count %q", args[2])
		}
	}
	path := ts.MkAbs(args[0])
	count := func() int {
		data, _ := os.ReadFile(path)
		k := 0
		for _, l := range strings.Split(string(data), "\n") {
			if re.MatchString(l) {
				k++
			}
		}
		return k
	}
	deadline := time.Now().Add(waitLimit)
	for count() < n {
		if time.Now().After(deadline) {
			data, _ := os.ReadFile(path)
			ts.Fatalf("waited %v for %d lines of %s matching %q; it holds:\n%s", waitLimit, n, args[0], args[1], data)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not waiting for time to pass
	}
}

// cmdHooks installs a hook script for every class named in a model's
// headers, as its destroy hook and as its notify hook for every handler
// named in the model's onDestruction records: hooks MODEL HOOKSDIR
// SCRIPT. The hooks are DIR/<class>/destroy and
// DIR/<class>/notify/<handler>, mode 0755.
func cmdHooks(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: hooks MODEL HOOKSDIR SCRIPT")
	}
	model, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	script, err := os.ReadFile(ts.MkAbs(args[2]))
	ts.Check(err)
	if err := hooktest.Install(ts.MkAbs(args[1]), model, script); err != nil {
		ts.Fatalf("hooks: %s: %v", args[0], err)
	}
}

// readPlan reads a plan (objgc plan --format json) for doomed and
// traceorder.
func readPlan(ts *testscript.TestScript, name string) *planfile.File {
	data, err := os.ReadFile(ts.MkAbs(name))
	ts.Check(err)
	p, err := planfile.Parse(name, data)
	if err != nil || p == nil {
		ts.Fatalf("%s: not a plan in JSON: %v", name, err)
	}
	return p
}

// cmdDoomed prints the ids a plan (objgc plan --format json) dooms, sorted,
// one a line: doomed PLAN.
func cmdDoomed(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: doomed PLAN")
	}
	out := ts.Stdout() // an empty stdout when nothing is doomed
	var ids []string
	for _, g := range readPlan(ts, args[0]).Groups {
		for _, o := range g.Objects {
			ids = append(ids, o.ID)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintln(out, id)
	}
}

// cmdTraceorder asserts that the hook runs a trace records, from line
// FROM on (1 when not given), are those of a plan, in its order:
// traceorder TRACE PLAN [FROM]. The trace's run lines are "<event> <id>
// <group>" (other lines, starting with "start ", are left out); the plan
// is objgc plan --format json. The order is the notifications group by
// group, then the destroy groups, any order within a block; a
// notification without a hook is left out.
func cmdTraceorder(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: traceorder TRACE PLAN [FROM]")
	}
	from := 1
	if len(args) == 3 {
		var err error
		if from, err = strconv.Atoi(args[2]); err != nil || from < 1 {
			ts.Fatalf("traceorder: bad line number %q", args[2])
		}
	}
	runs := traceRuns(ts, args[0], from)
	if err := hooktest.CheckOrder(runs, hooktest.ExpectedBlocks(readPlan(ts, args[1]), nil)); err != nil {
		ts.Fatalf("traceorder: %v", err)
	}
}

// traceRuns returns the run lines ("<event> <id> <group>") of a trace
// from line from on: every line but the "start " ones.
func traceRuns(ts *testscript.TestScript, name string, from int) []string {
	data, err := os.ReadFile(ts.MkAbs(name))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		ts.Check(err)
	}
	var runs []string
	for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if i+1 < from || l == "" || strings.HasPrefix(l, "start ") {
			continue
		}
		runs = append(runs, l)
	}
	return runs
}

// cmdTraceruns prints the run lines of a trace ("<event> <id> <group>",
// not the "start " lines), sorted: traceruns [-ids] TRACE. With -ids it
// prints only their ids. A missing trace has none.
func cmdTraceruns(ts *testscript.TestScript, neg bool, args []string) {
	ids := len(args) > 0 && args[0] == "-ids"
	if ids {
		args = args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: traceruns [-ids] TRACE")
	}
	out := ts.Stdout()
	var lines []string
	for _, l := range traceRuns(ts, args[0], 1) {
		if f := strings.Fields(l); ids && len(f) > 1 {
			l = f[1]
		}
		lines = append(lines, l)
	}
	for _, l := range slices.Sorted(slices.Values(lines)) {
		fmt.Fprintln(out, l)
	}
}

// cmdPartition asserts that the lines of files A and B are disjoint and
// together are the lines of ALL (as sets): partition ALL A B.
func cmdPartition(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: partition ALL A B")
	}
	set := func(name string) map[string]bool {
		data, err := os.ReadFile(ts.MkAbs(name))
		ts.Check(err)
		out := map[string]bool{}
		for _, l := range strings.Split(string(data), "\n") {
			if l != "" {
				out[l] = true
			}
		}
		return out
	}
	all, a, b := set(args[0]), set(args[1]), set(args[2])
	for l := range a {
		if b[l] {
			ts.Fatalf("%s is in both %s and %s", l, args[1], args[2])
		}
	}
	for l := range all {
		if !a[l] && !b[l] {
			ts.Fatalf("%s of %s is in neither %s nor %s", l, args[0], args[1], args[2])
		}
	}
	for _, m := range []map[string]bool{a, b} {
		for l := range m {
			if !all[l] {
				ts.Fatalf("%s is not in %s", l, args[0])
			}
		}
	}
}

// cmdJSON prints values of a JSON file, one a line, each selected by a
// gjson path (github.com/tidwall/gjson): json FILE PATH... A string
// prints as itself, anything else as JSON; a path that selects nothing
// fails.
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: json FILE PATH...")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	if !gjson.ValidBytes(data) {
		ts.Fatalf("json: %s is not JSON", args[0])
	}
	for _, path := range args[1:] {
		r := gjson.GetBytes(data, path)
		if !r.Exists() {
			ts.Fatalf("json: %s has nothing at %s", args[0], path)
		}
		if r.Type == gjson.String {
			fmt.Fprintln(ts.Stdout(), r.Str)
		} else {
			fmt.Fprintln(ts.Stdout(), r.Raw)
		}
	}
}

// cmdUndeploy removes every object with header id ID from the Objects
// tree of a model, as the next deployment would: undeploy MODEL ID. The
// model is rewritten with encoding/json (keys sorted, two-space indent).
// An ID that is not in Objects fails.
func cmdUndeploy(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: undeploy MODEL ID")
	}
	path := ts.MkAbs(args[0])
	data, err := os.ReadFile(path)
	ts.Check(err)
	var env map[string]any
	if err := json.Unmarshal(data, &env); err != nil {
		ts.Fatalf("undeploy: %s: %v", args[0], err)
	}
	found := false
	is := func(v any) bool {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		h, ok := m["?"].(map[string]any)
		return ok && h["id"] == args[1]
	}
	var drop func(v any) any
	drop = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if is(x) {
					found = true
					v[k] = nil
					continue
				}
				v[k] = drop(x)
			}
		case []any:
			out := v[:0]
			for _, x := range v {
				if is(x) {
					found = true
					continue
				}
				out = append(out, drop(x))
			}
			return out
		}
		return v
	}
	env["Objects"] = drop(env["Objects"])
	if !found {
		ts.Fatalf("undeploy: %s has no object %s in Objects", args[0], args[1])
	}
	data, err = json.MarshalIndent(env, "", "  ")
	ts.Check(err)
	ts.Check(os.WriteFile(path, data, 0o644))
}

// cmdAlive asserts that a process whose pid a file holds still runs (not
// a zombie): alive FILE|DIR. A directory means every file in it; with !,
// that none runs. Linux only (/proc).
func cmdAlive(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: [!] alive FILE|DIR")
	}
	path := ts.MkAbs(args[0])
	files := []string{path}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		entries, err := os.ReadDir(path)
		ts.Check(err)
		files = files[:0]
		for _, e := range entries {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	if len(files) == 0 {
		ts.Fatalf("alive: no pid files in %s", args[0])
	}
	var running []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		ts.Check(err)
		pid := strings.TrimSpace(string(data))
		if _, err := strconv.Atoi(pid); err != nil {
			ts.Fatalf("alive: %s does not hold a pid: %q", f, data)
		}
		if processRuns(pid) {
			running = append(running, pid)
		}
	}
	switch {
	case neg && len(running) > 0:
		ts.Fatalf("processes %v still run", running)
	case !neg && len(running) < len(files):
		ts.Fatalf("only %v of the %d processes run", running, len(files))
	}
}

// cmdWaitopen waits until a process bg started has a file open (Linux
// /proc/PID/fd): waitopen NAME FILE. A process waiting for a lock has
// its lock file open, so this tells a waiting objgc from one that has not
// got that far yet. It polls every 10 ms, for at most a minute.
func cmdWaitopen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitopen NAME FILE")
	}
	p := findBg(ts, args[0])
	pid := strconv.Itoa(p.cmd.Process.Pid)
	want := ts.MkAbs(args[1])
	holds := func() bool {
		fds, _ := os.ReadDir(filepath.Join("/proc", pid, "fd"))
		for _, fd := range fds {
			if to, err := os.Readlink(filepath.Join("/proc", pid, "fd", fd.Name())); err == nil && to == want {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(waitLimit)
	for !holds() {
		select {
		case <-p.done:
			ts.Fatalf("%s ended before it opened %s", args[0], args[1])
		default:
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waited %v for %s to open %s", waitLimit, args[0], args[1])
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not waiting for time to pass
	}
}

// processRuns reports whether process pid exists and is not a zombie.
func processRuns(pid string) bool {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || !strings.HasPrefix(string(stat[i+1:]), " Z")
}

// holdlockMain is the holdlock program of the scripts: holdlock FILE
// takes an exclusive flock(2) on FILE with gofrs/flock, as another objgc
// apply does on <target>.lock, prints "locked", and holds it until SIGINT
// or SIGTERM, then exits 0. Start it with bg and wait for "locked" with
// waitfor .bg/NAME.stdout.
func holdlockMain() int {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: holdlock FILE")
		return 2
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	fl := flock.New(os.Args[1], flock.SetFlag(os.O_RDWR|os.O_CREATE), flock.SetPermissions(0o644))
	if err := fl.Lock(); err != nil {
		fmt.Fprintln(os.Stderr, "holdlock:", err)
		return 1
	}
	fmt.Println("locked")
	<-stop
	fl.Unlock()
	return 0
}
