//go:build linux

package cmd

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// refusalWorkspace is one generated workspace of TestPlanAndApplyRefuseAlike.
type refusalWorkspace struct {
	model      string   // testdata pair copied as the model
	hooks      string   // missing, none, empty, ok, notexec, noexec, unreadable, writable
	settings   []string // plan's flags beyond --hooks-dir
	hookSubset uint     // which doomed classes get a hook (bit k: class k)
}

func (w refusalWorkspace) String() string {
	return fmt.Sprintf("%s hooks=%s subset=%b %s", w.model, w.hooks, w.hookSubset, strings.Join(w.settings, " "))
}

// TestPlanAndApplyRefuseAlike: over generated workspaces (hooks dirs
// missing, empty, unreadable, on a file system mounted noexec, writable
// by others, hooks not executable, dangling references, and every
// setting), plan --detailed-exitcode exits 1 exactly when apply of the
// plan it saved refuses (exit 1, nothing touched), and the JSON summary's
// refusals say so too. A plan that could not be made (a hooks dir that
// does not exist) is an error for apply of the model too.
func TestPlanAndApplyRefuseAlike(t *testing.T) {
	t.Setenv("OBJGC_CACHE_DIR", t.TempDir()) // no packages: hooks come from hooks dirs only
	t.Setenv("OBJGC_HOOKS_DIR", "")
	noexecDir := mountNoexec(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("OBJGC_TEST_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (OBJGC_TEST_SEED repeats it)", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	hookKinds := []string{"missing", "none", "empty", "ok", "notexec", "unreadable", "writable"}
	if noexecDir != "" {
		hookKinds = append(hookKinds, "noexec")
	}
	models := []string{"app-removed.json", "dangling-reference.json", "region-removed-handlers.json", "app-moved.json"}
	seen := map[[2]int]int{} // (plan exit, apply exit) -> count
	for i := range 60 {
		w := refusalWorkspace{
			model:      models[rng.IntN(len(models))],
			hooks:      hookKinds[rng.IntN(len(hookKinds))],
			hookSubset: uint(rng.IntN(8)),
		}
		for _, s := range []string{"--no-hooks", "--require-hooks", "--on-dangling=keep"} {
			if rng.IntN(3) == 0 {
				w.settings = append(w.settings, s)
			}
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			planCode, applyCode := checkRefuseAlike(t, w, noexecDir)
			seen[[2]int{planCode, applyCode}]++
		})
	}
	t.Logf("(plan, apply) exit statuses seen: %v", seen)
	// The generator must reach both sides of the rule.
	var refused, ran bool
	for k := range seen {
		refused = refused || k[0] == ExitError
		ran = ran || k[0] == ExitWorkFound
	}
	if !refused || !ran {
		t.Errorf("the workspaces generated did not reach both refusals and runs: %v", seen)
	}
}

// checkRefuseAlike makes workspace w, plans it with --detailed-exitcode
// --out and applies the saved plan, and checks that they agree.
func checkRefuseAlike(t *testing.T, w refusalWorkspace, noexecDir string) (planCode, applyCode int) {
	t.Helper()
	t.Log(w)
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "pairs", w.model))
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "m.json")
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	classes := doomedClasses(t, model)
	hooksDir := filepath.Join(dir, "hooks")
	if w.hooks == "noexec" {
		hooksDir = filepath.Join(noexecDir, filepath.Base(dir))
	}
	var flags []string
	switch w.hooks {
	case "none":
	case "missing":
		flags = append(flags, "--hooks-dir", hooksDir)
	default:
		flags = append(flags, "--hooks-dir", hooksDir)
		if err := os.MkdirAll(hooksDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if w.hooks == "empty" {
			break
		}
		for k, class := range classes {
			if w.hookSubset&(1<<k) == 0 && k > 0 {
				continue // the first class always has one
			}
			writeTestHook(t, filepath.Join(hooksDir, class, "destroy"))
		}
		first := filepath.Join(hooksDir, classes[0])
		switch w.hooks {
		case "notexec":
			if err := os.Chmod(filepath.Join(first, "destroy"), 0o644); err != nil {
				t.Fatal(err)
			}
		case "unreadable":
			if err := os.Chmod(first, 0o000); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(first, 0o755) })
		case "writable":
			if err := os.Chmod(first, 0o777); err != nil {
				t.Fatal(err)
			}
		}
	}
	flags = append(flags, w.settings...)
	plan := filepath.Join(dir, "plan.json")
	planArgs := append(append([]string{"plan", "--detailed-exitcode", "--out", plan}, flags...), model)
	planCode, _, planErr := runCmd(t, "", planArgs...)
	before, _ := os.ReadFile(model)

	if _, err := os.Stat(plan); err != nil {
		// No plan made: an error of plan's (exit 1), which apply of
		// the model with the same flags meets too.
		if planCode != ExitError {
			t.Fatalf("plan made no plan file and exited %d: %s", planCode, planErr)
		}
		applyCode, _, applyErr := runCmd(t, "", append(append([]string{"apply"}, flags...), model)...)
		if applyCode != ExitError {
			t.Fatalf("plan failed (%s) and apply of the model exited %d: %s", planErr, applyCode, applyErr)
		}
		checkUntouched(t, model, before)
		return planCode, applyCode
	}
	var saved struct {
		Summary struct {
			ApplyRefuses bool `json:"apply_refuses"`
			Refusals     []struct {
				Code string `json:"code"`
			} `json:"refusals"`
		} `json:"summary"`
	}
	if data, err := os.ReadFile(plan); err != nil || json.Unmarshal(data, &saved) != nil {
		t.Fatalf("reading the saved plan: %v", err)
	}
	if refuses := len(saved.Summary.Refusals) > 0; refuses != saved.Summary.ApplyRefuses || refuses != (planCode == ExitError) {
		t.Errorf("plan exited %d and its summary says apply_refuses %v with refusals %v", planCode, saved.Summary.ApplyRefuses, saved.Summary.Refusals)
	}
	applyCode, _, applyErr := runCmd(t, "", "apply", plan)
	switch {
	case planCode == ExitError:
		if applyCode != ExitError {
			t.Errorf("plan said apply would refuse (%s), and apply exited %d: %s", planErr, applyCode, applyErr)
		}
		checkUntouched(t, model, before)
	case planCode == ExitWorkFound:
		if applyCode != ExitOK && applyCode != ExitIncomplete {
			t.Errorf("plan said apply would run (exit 2), and apply exited %d: %s", applyCode, applyErr)
		}
	case planCode == ExitOK:
		if applyCode != ExitOK {
			t.Errorf("plan found nothing to do, and apply exited %d: %s", applyCode, applyErr)
		}
	default:
		t.Errorf("plan exited %d: %s", planCode, planErr)
	}
	return planCode, applyCode
}

// checkUntouched fails unless the model is as it was and apply left no
// lock file or journal beside it: a refusal touches nothing.
func checkUntouched(t *testing.T, model string, before []byte) {
	t.Helper()
	if now, _ := os.ReadFile(model); string(now) != string(before) {
		t.Errorf("the refused apply changed %s", model)
	}
	for _, f := range []string{model + ".lock", model + ".journal"} {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("the refused apply left %s", f)
		}
	}
}

// mountNoexec mounts a tmpfs with noexec on a folder of the test's and
// returns it, or "" (logging why) where it cannot: mounting needs root.
func mountNoexec(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOEXEC|unix.MS_NOSUID|unix.MS_NODEV, "size=4m,mode=0755"); err != nil {
		t.Logf("no noexec workspaces: mounting a tmpfs with noexec on %s: %v (needs root)", dir, err)
		return ""
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}
