//go:build unix

package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSavedPlanTravelsWithWorkspace: a plan saved in one directory names
// what lies there (the model, the hooks dir, its hooks) relative to
// itself and what lies elsewhere by absolute path; moved with its
// workspace to another directory, the original gone, it applies there;
// a path edited in it is still refused.
func TestSavedPlanTravelsWithWorkspace(t *testing.T) {
	t.Setenv("OBJGC_CACHE_DIR", t.TempDir())
	t.Setenv("OBJGC_HOOKS_DIR", "")
	pairs, err := filepath.Abs(filepath.Join("..", "testdata", "pairs"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "system-hooks")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	jobA := filepath.Join(root, "jobA")
	model := filepath.Join(jobA, "m.json")
	makeWorkspace(t, jobA, filepath.Join(pairs, "app-removed.json"))
	plan := filepath.Join(jobA, "plan.json")
	if code, _, stderr := runCmd(t, "", "plan", "--out", plan, "--hooks-dir", filepath.Join(jobA, "hooks"), "--hooks-dir", outside, model); code != ExitOK {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}
	var saved struct {
		Inputs    []struct{ Path string } `json:"inputs"`
		HooksDirs []string                `json:"hooks_dirs"`
		Groups    []struct {
			Objects []struct {
				Hooks []struct{ Path string } `json:"hooks"`
			} `json:"objects"`
		} `json:"groups"`
	}
	data, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	if got := saved.Inputs[0].Path; got != "m.json" {
		t.Errorf("input recorded as %q, want m.json", got)
	}
	if want := []string{"hooks", outside}; strings.Join(saved.HooksDirs, ",") != strings.Join(want, ",") {
		t.Errorf("hooks dirs recorded as %q, want %q", saved.HooksDirs, want)
	}
	if got := saved.Groups[0].Objects[0].Hooks[0].Path; filepath.IsAbs(got) || !strings.HasPrefix(got, "hooks"+string(filepath.Separator)) {
		t.Errorf("hook recorded as %q, want relative to the plan", got)
	}

	// Moved: jobA is gone, the plan is applied in jobB from another
	// working directory.
	jobB := filepath.Join(root, "jobB")
	if err := os.Rename(jobA, jobB); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	code, stdout, stderr := runCmd(t, "", "apply", filepath.Join(jobB, "plan.json"))
	if code != ExitOK {
		t.Fatalf("apply of the moved plan: exit %d\n%s%s", code, stdout, stderr)
	}
	after, err := os.ReadFile(filepath.Join(jobB, "m.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(after), `"fda74653-8b66-42e2-be16-12ebc87d7570"`) {
		t.Errorf("the moved plan's doomed object is still in the model")
	}
	// Run again: applied already.
	if code, _, stderr := runCmd(t, "", "apply", filepath.Join(jobB, "plan.json")); code != ExitOK {
		t.Errorf("apply again: exit %d: %s", code, stderr)
	}

	// An edited path is refused: another file under the plan's
	// directory (its content is not what was planned), and a path that
	// leaves the directory.
	jobC := filepath.Join(root, "jobC")
	makeWorkspace(t, jobC, filepath.Join(pairs, "app-removed.json"))
	other, err := os.ReadFile(filepath.Join(pairs, "app-moved.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(jobC, "other.json"), other, 0o644); err != nil {
		t.Fatal(err)
	}
	planC := filepath.Join(jobC, "plan.json")
	if code, _, stderr := runCmd(t, "", "plan", "--out", planC, "--hooks-dir", filepath.Join(jobC, "hooks"), filepath.Join(jobC, "m.json")); code != ExitOK {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}
	orig, err := os.ReadFile(planC)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"other.json", ExitStalePlan, "other.json changed since it was planned"},
		{"../jobB/m.json", ExitError, `path "../jobB/m.json" leaves the plan's directory`},
	} {
		edited := strings.Replace(string(orig), `"path": "m.json"`, `"path": "`+tc.path+`"`, 1)
		if edited == string(orig) {
			t.Fatal("the plan names no input m.json")
		}
		if err := os.WriteFile(planC, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCmd(t, "", "apply", planC)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("apply of a plan naming %s: exit %d, stderr %q; want %d and %q", tc.path, code, stderr, tc.code, tc.want)
		}
	}
	if now, _ := os.ReadFile(filepath.Join(jobC, "other.json")); string(now) != string(other) {
		t.Error("a refused apply changed other.json")
	}
}

// makeWorkspace makes dir holding m.json (a copy of the model file pair)
// and hooks/, with a destroy hook for every doomed class.
func makeWorkspace(t *testing.T, dir, pair string) {
	t.Helper()
	data, err := os.ReadFile(pair)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "m.json")
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, class := range doomedClasses(t, model) {
		writeTestHook(t, filepath.Join(dir, "hooks", class, "destroy"))
	}
}

// doomedClasses returns the classes of the objects plan dooms in model,
// each once.
func doomedClasses(t *testing.T, model string) []string {
	t.Helper()
	code, stdout, stderr := runCmd(t, "", "plan", "--no-hooks", "--format", "json", model)
	if code != ExitOK {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}
	var doc struct {
		Groups []struct {
			Objects []struct {
				TypeRef struct {
					Name string `json:"name"`
				} `json:"type_ref"`
			} `json:"objects"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	var classes []string
	seen := map[string]bool{}
	for _, g := range doc.Groups {
		for _, o := range g.Objects {
			if n := o.TypeRef.Name; !seen[n] {
				seen[n] = true
				classes = append(classes, n)
			}
		}
	}
	if len(classes) == 0 {
		classes = []string{"io.murano.Object"} // nothing doomed: any class will do
	}
	return classes
}

func writeTestHook(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}
