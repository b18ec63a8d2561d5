//go:build unix

package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApplyAsksAtTerminal: apply MODEL with standard input and stderr on
// a terminal shows the plan's summary and destroys only after "yes";
// --auto-approve, a saved plan (reviewed already) and a run without a
// terminal do not ask. A plan that destroys the whole environment says
// so in the question.
func TestApplyAsksAtTerminal(t *testing.T) {
	t.Setenv("OBJGC_CACHE_DIR", t.TempDir())
	t.Setenv("OBJGC_HOOKS_DIR", "")
	pairs, err := filepath.Abs(filepath.Join("..", "testdata", "pairs"))
	if err != nil {
		t.Fatal(err)
	}
	apply := func(t *testing.T, stdin string, tty bool, args ...string) (int, string) {
		t.Helper()
		var out, errb bytes.Buffer
		streams := &IO{In: strings.NewReader(stdin), Out: &out, Err: &errb, IsTTYIn: tty, IsTTYErr: tty,
			progress: &progressTiming{}, Getenv: os.Getenv}
		code := run(context.Background(), BuildInfo{}, append([]string{"apply"}, args...), streams)
		return code, errb.String()
	}
	for _, tc := range []struct {
		name      string
		stdin     string
		tty       bool
		flags     []string
		saved     bool
		wantAsk   bool
		wantCode  int
		destroyed bool
	}{
		{"no", "no\n", true, nil, false, true, ExitError, false},
		{"end of input", "", true, nil, false, true, ExitError, false},
		{"yes", "yes\n", true, nil, false, true, ExitOK, true},
		{"auto-approve", "", true, []string{"--auto-approve"}, false, false, ExitOK, true},
		{"no terminal", "", false, nil, false, false, ExitOK, true},
		{"saved plan", "", true, nil, true, false, ExitOK, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			makeWorkspace(t, dir, filepath.Join(pairs, "app-removed.json"))
			model := filepath.Join(dir, "m.json")
			before, _ := os.ReadFile(model)
			args := append([]string{"--hooks-dir", filepath.Join(dir, "hooks")}, tc.flags...)
			target := model
			if tc.saved {
				plan := filepath.Join(dir, "plan.json")
				if code, _, stderr := runCmd(t, "", append([]string{"plan", "--out", plan}, append(args, model)...)...); code != ExitOK {
					t.Fatalf("plan: exit %d: %s", code, stderr)
				}
				args, target = tc.flags, plan
			}
			code, stderr := apply(t, tc.stdin, tc.tty, append(args, target)...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d: %s", code, tc.wantCode, stderr)
			}
			asked := strings.Contains(stderr, "Destroy them? Only 'yes' goes on")
			if asked != tc.wantAsk {
				t.Fatalf("asked %v, want %v: %s", asked, tc.wantAsk, stderr)
			}
			if asked && !strings.Contains(stderr, "  destroy 3 objects in 2 groups, deepest first, running their destroy hooks:\n    io.murano.resources.LinuxMuranoInstance 76b9ca88-c668-4e37-a830-5845adc10b0e (group 2)\n") {
				t.Errorf("the question lacks the plan's summary:\n%s", stderr)
			}
			after, _ := os.ReadFile(model)
			if changed := !bytes.Equal(before, after); changed != tc.destroyed {
				t.Errorf("model changed %v, want %v", changed, tc.destroyed)
			}
			if !tc.destroyed {
				if !strings.Contains(stderr, "objgc: apply cancelled: nothing was done") {
					t.Errorf("stderr does not say apply was cancelled:\n%s", stderr)
				}
				if _, err := os.Lstat(model + ".lock"); err == nil {
					t.Error("a cancelled apply made the lock file")
				}
			}
		})
	}

	t.Run("environment destroyed", func(t *testing.T) {
		dir := t.TempDir()
		makeWorkspace(t, dir, filepath.Join(pairs, "environment-deleted.json"))
		code, stderr := apply(t, "n\n", true, "--hooks-dir", filepath.Join(dir, "hooks"), filepath.Join(dir, "m.json"))
		if code != ExitError || !strings.Contains(stderr, "  warning: the whole environment 83bff5acf8354816b08cf9b4917c898d is destroyed") ||
			!strings.Contains(stderr, "destroy 10 objects in 3 groups") {
			t.Errorf("exit %d:\n%s", code, stderr)
		}
	})
}
