package cmd

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCompareHooks(t *testing.T) {
	a := planHook{Event: "destroy", Class: "A", Path: "/h/A/destroy", SHA256: "aaaaaaaaaaaaaaaa"}
	b := planHook{Event: "destroy", Class: "B", Path: "/h/B/destroy", SHA256: "bbbbbbbbbbbbbbbb"}
	aChanged := a
	aChanged.SHA256 = "cccccccccccccccc"
	aBroken := a
	aBroken.Error = "not executable"
	tests := []struct {
		name         string
		planned, now []planHook
		want         []string
	}{
		{"same", []planHook{a, b}, []planHook{a, b}, nil},
		{"none", nil, nil, nil},
		{"added", []planHook{a}, []planHook{a, b}, []string{"hook /h/B/destroy was added since it was planned"}},
		{"added to none", nil, []planHook{b}, []string{"hook /h/B/destroy was added since it was planned"}},
		{"removed", []planHook{a, b}, []planHook{b}, []string{"hook /h/A/destroy was removed since it was planned"}},
		{"changed", []planHook{a}, []planHook{aChanged}, []string{"hook /h/A/destroy changed since it was planned (sha256 aaaaaaaaaaaa, now cccccccccccc)"}},
		{"cannot run", []planHook{a}, []planHook{aBroken}, []string{"hook /h/A/destroy can no longer run (not executable)"}},
		{"can run", []planHook{aBroken}, []planHook{a}, []string{"hook /h/A/destroy can run now (when planned: not executable)"}},
		{"reordered", []planHook{a, b}, []planHook{b, a}, []string{"hooks /h/A/destroy and /h/B/destroy run in another order than planned"}},
		{"replaced", []planHook{a}, []planHook{b}, []string{"hook /h/B/destroy was added since it was planned", "hook /h/A/destroy was removed since it was planned"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compareHooks(tt.planned, tt.now); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("compareHooks = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestComparePackages(t *testing.T) {
	core := planPackage{FullName: "io.murano", Version: "0.0.0", ID: "1111111111111111"}
	coreNew := planPackage{FullName: "io.murano", Version: "0.0.0", ID: "2222222222222222"}
	coreOther := planPackage{FullName: "io.murano", Version: "1.0.0", ID: "3333333333333333"}
	db := planPackage{FullName: "io.murano.databases", Version: "1.0.0", ID: "4444444444444444"}
	tests := []struct {
		name         string
		planned, now []planPackage
		want         []string
	}{
		{"same", []planPackage{core, db}, []planPackage{core, db}, nil},
		{"replaced", []planPackage{core, db}, []planPackage{coreNew, db}, []string{"package io.murano 0.0.0 was replaced (id 111111111111, now 222222222222)"}},
		{"gone", []planPackage{core, db}, []planPackage{db}, []string{"package io.murano 0.0.0 (id 111111111111) is no longer in the cache"}},
		{"new", []planPackage{db}, []planPackage{core, db}, []string{"package io.murano 0.0.0 (id 111111111111) is used now and was not when planned"}},
		{"another version", []planPackage{core}, []planPackage{coreOther}, []string{
			"package io.murano 0.0.0 (id 111111111111) is no longer in the cache",
			"package io.murano 1.0.0 (id 333333333333) is used now and was not when planned"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := comparePackages(tt.planned, tt.now); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("comparePackages = %q, want %q", got, tt.want)
			}
		})
	}
}

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
	plan := func() *planDocument {
		t.Helper()
		out := filepath.Join(dir, "plan.json")
		var o, e strings.Builder
		code := Run(context.Background(), BuildInfo{}, []string{"plan", "--hooks-dir", hooks, "--out", out,
			"../testdata/pairs/region-removed-handlers.json"}, strings.NewReader(""), &o, &e)
		if code != ExitOK {
			t.Fatalf("plan: exit %d: %s", code, e.String())
		}
		sp, err := readSavedPlan(out)
		if err != nil || sp == nil {
			t.Fatalf("readSavedPlan: %v, %v", sp, err)
		}
		return sp
	}
	check := func(sp *planDocument) []string {
		t.Helper()
		f, diffs := checkPlanHooks(context.Background(), &IO{Err: &strings.Builder{}}, sp)
		if f.Packages != nil {
			f.Packages.Close()
		}
		return diffs
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
	err := staleError("p.json", diffs)
	if code := exitCode(err); code != ExitStalePlan {
		t.Errorf("exit %d, want %d", code, ExitStalePlan)
	}
	if want := "plan p.json is stale: d1; d2; d3; d4; d5; and 2 more; plan again"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}
