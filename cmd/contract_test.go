package cmd

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/objgc/objgc/destroy"
)

// TestCheckPlanHooks plans a real model with real hook files, then changes
// the files and checks what the saved plan's check says: a notify hook
// and a destroy hook, each added, changed or removed.
func TestCheckPlanHooks(t *testing.T) {
	t.Setenv("OBJGC_CACHE_DIR", t.TempDir())
	dir := t.TempDir()
	hooks := filepath.Join(dir, "hooks")
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(hooks, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	network := "io.murano.resources.NeutronNetwork/destroy"
	handler := "io.murano.Environment/notify/onRegionRemoved"
	write(network, "#!/bin/sh\nexit 0\n")
	plan := func() *destroy.PlanFile {
		t.Helper()
		out := filepath.Join(dir, "plan.json")
		var o, e strings.Builder
		code := Run(context.Background(), BuildInfo{}, []string{"plan", "--hooks-dir", hooks, "--out", out,
			"../testdata/pairs/region-removed-handlers.json"}, strings.NewReader(""), &o, &e)
		if code != ExitOK {
			t.Fatalf("plan: exit %d: %s", code, e.String())
		}
		sp, _, err := readSavedPlan(out)
		if err != nil || sp == nil {
			t.Fatalf("readSavedPlan: %v, %v", sp, err)
		}
		return sp
	}
	check := func(sp *destroy.PlanFile) []string {
		t.Helper()
		f, err := newFinder(&IO{Err: &strings.Builder{}}, sp.HooksDirs, sp.CacheDir, "", false)
		if err != nil {
			t.Fatal(err)
		}
		if f.Packages != nil {
			defer f.Packages.Close()
		}
		return destroy.PlanChanges(context.Background(), sp, f)
	}
	abs := func(rel string) string { return filepath.Join(hooks, rel) }

	sp := plan()
	if diffs := check(sp); diffs != nil {
		t.Fatalf("unchanged: %q", diffs)
	}
	write(handler, "#!/bin/sh\nexit 0\n")
	if got, want := check(sp), []string{"hook " + abs(handler) + " was added since it was planned"}; !reflect.DeepEqual(got, want) {
		t.Errorf("notify hook added: %q, want %q", got, want)
	}
	sp = plan()
	if sp.Notifications[0].Hook == nil || sp.Notifications[0].Hook.Path != abs(handler) || len(sp.Notifications[0].Hook.SHA256) != 64 {
		t.Fatalf("the plan does not record the handler hook: %+v", sp.Notifications[0])
	}
	write(handler, "#!/bin/sh\nexit 1\n")
	write(network, "#!/bin/sh\nexit 1\n")
	got := check(sp)
	if len(got) != 2 || !strings.HasPrefix(got[0], "hook "+abs(network)+" changed since it was planned (sha256 ") ||
		!strings.HasPrefix(got[1], "hook "+abs(handler)+" changed since it was planned") {
		t.Errorf("both changed: %q", got)
	}
	sp = plan()
	if err := os.Remove(abs(network)); err != nil {
		t.Fatal(err)
	}
	if got, want := check(sp), []string{"hook " + abs(network) + " was removed since it was planned"}; !reflect.DeepEqual(got, want) {
		t.Errorf("destroy hook removed: %q, want %q", got, want)
	}
	if err := os.Chmod(abs(handler), 0o644); err != nil {
		t.Fatal(err)
	}
	got = check(sp)
	if len(got) != 2 || !strings.HasPrefix(got[1], "hook "+abs(handler)+" can no longer run (") {
		t.Errorf("handler hook not executable: %q", got)
	}
	if err := os.RemoveAll(hooks); err != nil {
		t.Fatal(err)
	}
	if got, want := check(sp), []string{"hooks dir " + hooks + " no longer exists"}; !reflect.DeepEqual(got, want) {
		t.Errorf("hooks dir removed: %q, want %q", got, want)
	}
}

func TestStaleErrorNamesTheFirstDifferences(t *testing.T) {
	diffs := []string{"d1", "d2", "d3", "d4", "d5", "d6", "d7"}
	var err error = &destroy.StaleError{Plan: "p.json", Diffs: diffs}
	if code := exitCode(err); code != ExitStalePlan {
		t.Errorf("exit %d, want %d", code, ExitStalePlan)
	}
	if want := "plan p.json is stale: d1; d2; d3; d4; d5; and 2 more; plan again"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}
