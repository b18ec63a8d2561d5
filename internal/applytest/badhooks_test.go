package applytest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBadHooks: a hook that misbehaves is a failure of its object alone
// (the other objects of app-removed are destroyed; PetClinic blocks
// nothing), and the report says why.
func TestBadHooks(t *testing.T) {
	const (
		petClinic = "fda74653-8b66-42e2-be16-12ebc87d7570"
		class     = "io.murano.apps.java.PetClinic"
	)
	for _, tc := range []struct {
		name   string
		script string
		mode   os.FileMode
		args   []string
		reason string // in the report's error
		max    time.Duration
	}{
		{
			name: "ignores-sigterm",
			// The shell and its children ignore SIGTERM: only the SIGKILL
			// after the grace period ends them.
			script: "#!/bin/sh\ntrap '' TERM\necho \"$$\" > \"$OBJGC_TEST_STATE/pid\"\nwhile :; do sleep 0.1; done\n",
			args:   []string{"--hook-timeout", "500ms"},
			reason: "timed out after 500ms, process group killed",
			max:    30 * time.Second,
		},
		{
			name:   "never-exits",
			script: "#!/bin/sh\necho \"$$\" > \"$OBJGC_TEST_STATE/pid\"\nsleep 1000\n",
			args:   []string{"--hook-timeout", "500ms"},
			reason: "timed out after 500ms, process group terminated",
			max:    8 * time.Second,
		},
		{
			name:   "invalid-json",
			script: "#!/bin/sh\necho '{\"done\": tru'\n",
			reason: "stdout",
		},
		{
			name:   "text-on-stdout",
			script: "#!/bin/sh\necho deleted the app\n",
			reason: "stdout",
		},
		{
			name:   "not-executable",
			script: "#!/bin/sh\nexit 0\n",
			mode:   0o644,
			reason: "not executable",
		},
		{
			name:   "no-interpreter",
			script: "#!/nonexistent/interpreter\nexit 0\n",
			reason: "cannot start",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			model := e.copyPair("app-removed.json")
			installHooks(t, e.hooks, e.readFile("m.json"), traceHook)
			bad := filepath.Join(e.hooks, class, "destroy")
			writeHook(t, bad, tc.script)
			if tc.mode != 0 {
				if err := os.Chmod(bad, tc.mode); err != nil {
					t.Fatal(err)
				}
			}
			r := e.objgc(append([]string{"apply", "--hooks-dir", e.hooks, "--format", "json", model}, tc.args...)...)
			mustExit(t, r, 3)
			if tc.max > 0 && r.elapsed > tc.max {
				t.Errorf("apply took %v, want at most %v", r.elapsed, tc.max)
			}
			rep := parseReport(t, r)
			for _, o := range rep.Objects {
				if o.ID == petClinic {
					if o.State != "failed" || !strings.Contains(o.Error, tc.reason) || !strings.Contains(o.Error, bad) {
						t.Errorf("bad hook's object: state %q, error %q; want failed with %q", o.State, o.Error, tc.reason)
					}
					continue
				}
				if o.State != "destroyed" {
					t.Errorf("%s: state %q, want destroyed (only the bad hook's object fails)", o.ID, o.State)
				}
			}
			if rep.Summary.Failed != 1 || rep.Summary.Blocked != 0 || rep.Summary.Destroyed != 2 {
				t.Errorf("summary %+v", rep.Summary)
			}
			if left := e.plan(model).doomed(); len(left) != 1 || !left[petClinic] {
				t.Errorf("still doomed: %v, want only %s", left, petClinic)
			}
			// A hook that was stopped left no process of its group behind.
			if pid, err := os.ReadFile(filepath.Join(e.state, "pid")); err == nil {
				if alive(strings.TrimSpace(string(pid))) {
					t.Errorf("hook process %s still runs after apply ended", pid)
				}
			}
			if tc.max > 0 {
				return // the text report's run would wait for the timeout again
			}
			// The text report says why too.
			r = e.objgc(append([]string{"apply", "--hooks-dir", e.hooks, model}, tc.args...)...)
			mustExit(t, r, 3)
			if !strings.Contains(r.stdout, "failed io.murano.apps.java.PetClinic "+petClinic+": hook "+bad+" destroy of "+petClinic+": ") ||
				!strings.Contains(r.stdout, tc.reason) {
				t.Errorf("text report does not say why:\n%s", r.stdout)
			}
		})
	}
}

// TestHookPathWithSpaces: a hooks dir whose path holds spaces works (no
// shell is involved), and a failure there names the path unambiguously.
func TestHookPathWithSpaces(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	model := e.copyPair("app-removed.json")
	dir := filepath.Join(e.dir, "my hooks", "with spaces")
	installHooks(t, dir, e.readFile("m.json"), traceHook)
	const petClinic = "fda74653-8b66-42e2-be16-12ebc87d7570"
	e.touchState("fail/"+petClinic, "7")
	r := e.objgc("apply", "--hooks-dir", dir, "--format", "json", model)
	mustExit(t, r, 3)
	rep := parseReport(t, r)
	states := rep.states()
	if states[petClinic] != "failed" || states["76b9ca88-c668-4e37-a830-5845adc10b0e"] != "destroyed" || states["769af50c-9629-4694-b623-e9b392941279"] != "destroyed" {
		t.Errorf("states %v", states)
	}
	for _, o := range rep.Objects {
		if o.ID == petClinic && !strings.Contains(o.Error, `hook "`+filepath.Join(dir, "io.murano.apps.java.PetClinic", "destroy")+`" destroy of`) {
			t.Errorf("error %q does not quote the hook's path", o.Error)
		}
	}
	if len(e.traceRuns()) != 2 {
		t.Errorf("trace %q", e.trace())
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
