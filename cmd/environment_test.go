package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunReadsEnvironmentThroughIO: a run sees the environment its IO
// gives, never the process's. The process has a configuration file that
// cannot be read, a hooks dir that does not exist and a variable its
// hooks would print; the IO has none of them. Every command runs as the
// IO says, and apply's hooks get the IO's environment. Given the same
// file through the IO, every command that reads settings refuses it.
func TestRunReadsEnvironmentThroughIO(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("plan: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OBJGC_CONFIG", bad)
	t.Setenv("OBJGC_HOOKS_DIR", filepath.Join(t.TempDir(), "none"))
	t.Setenv("OBJGC_TEST_MARK", "process")
	dir, model := progressModel(t, "#!/bin/sh\necho \"$OBJGC_TEST_MARK\" >> \"$OBJGC_TEST_MARKS\"\n")
	marks := filepath.Join(dir, "marks")
	home := t.TempDir()
	env := map[string]string{
		"HOME":                home,
		"OBJGC_SYSTEM_CONFIG": filepath.Join(home, "none.yaml"),
		"OBJGC_CACHE_DIR":     filepath.Join(home, "cache"),
	}
	streams := func(env map[string]string) (*IO, *bytes.Buffer) {
		var errb bytes.Buffer
		return &IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb,
			Getenv: func(k string) string { return env[k] },
			Environ: func() []string {
				return []string{"PATH=" + os.Getenv("PATH"), "OBJGC_TEST_MARK=io", "OBJGC_TEST_MARKS=" + marks}
			}}, &errb
	}
	commands := [][]string{
		{"plan", "--hooks-dir", filepath.Join(dir, "hooks"), model},
		{"version"},
		{"cache", "list"},
		{"apply", "--hooks-dir", filepath.Join(dir, "hooks"), model},
	}
	for _, args := range commands {
		s, errb := streams(env)
		code := run(context.Background(), BuildInfo{}, args, s)
		// There is no cache: cache list names the IO's.
		if args[0] == "cache" {
			if code != ExitError || !strings.Contains(errb.String(), env["OBJGC_CACHE_DIR"]) {
				t.Errorf("%s: exit %d, %q; want 1 naming the IO's cache %s", args, code, errb, env["OBJGC_CACHE_DIR"])
			}
		} else if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", args, code, errb)
		}
		if strings.Contains(errb.String(), bad) {
			t.Errorf("%s read the process's OBJGC_CONFIG: %s", args, errb)
		}
	}
	got, err := os.ReadFile(marks)
	if err != nil {
		t.Fatal(err)
	}
	for _, mark := range strings.Split(strings.TrimSuffix(string(got), "\n"), "\n") {
		if mark != "io" {
			t.Errorf("a hook saw OBJGC_TEST_MARK as %q, not the IO's (all: %q)", mark, got)
		}
	}

	env["OBJGC_CONFIG"] = bad
	for _, args := range commands[:3] {
		s, errb := streams(env)
		if code := run(context.Background(), BuildInfo{}, args, s); code != ExitError || !strings.Contains(errb.String(), bad) {
			t.Errorf("%s with the IO's OBJGC_CONFIG unreadable: exit %d, %q; want 1 naming %s", args, code, errb, bad)
		}
	}
}

// TestConfigurationOfCobraCommands: the root builds the configuration of
// every command but cobra's help and __complete, so that those work
// whatever the file holds, and so that the completion scripts' own
// setting (no-descriptions) is read from its variable.
func TestConfigurationOfCobraCommands(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("plan: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runWith := func(env map[string]string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		s := &IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: envWith(env)}
		return run(context.Background(), BuildInfo{}, args, s), out.String(), errb.String()
	}
	broken := map[string]string{"OBJGC_CONFIG": bad}
	if code, out, errb := runWith(broken, "help", "plan"); code != ExitOK || !strings.Contains(out, "objgc plan") {
		t.Errorf("help with an unreadable configuration: exit %d, %q %q", code, out, errb)
	}
	if code, _, errb := runWith(broken, cobraComplete, "plan", "--format", ""); code != ExitOK {
		t.Errorf("completion with an unreadable configuration: exit %d, %q", code, errb)
	}
	if code, _, errb := runWith(broken, "completion", "bash"); code != ExitError || !strings.Contains(errb, bad) {
		t.Errorf("completion bash with an unreadable configuration: exit %d, %q; want the file's error", code, errb)
	}
	_, plain, _ := runWith(nil, "completion", "bash")
	code, noDesc, errb := runWith(map[string]string{"OBJGC_COMPLETION_BASH_NO_DESCRIPTIONS": "true"}, "completion", "bash")
	if code != ExitOK || strings.Contains(plain, "__completeNoDesc") || !strings.Contains(noDesc, "__completeNoDesc") {
		t.Errorf("OBJGC_COMPLETION_BASH_NO_DESCRIPTIONS=true: exit %d, %q; the script does not ask for completions without descriptions", code, errb)
	}
}

// cobraComplete is cobra's hidden command that shells call for
// completions.
const cobraComplete = "__complete"

// TestSharedRunSettings: the settings plan and apply share have one key
// and one variable, so that a file that requires hooks makes plan judge
// the plan as apply does: plan --detailed-exitcode exits 1, and apply
// refuses, before any hook runs. The names of a command's own setting
// are refused for them, saying which name to use.
func TestSharedRunSettings(t *testing.T) {
	dir, model := progressModel(t, "#!/bin/sh\necho ran >> \"$(dirname \"$0\")/../../ran\"\n")
	home := t.TempDir()
	file := filepath.Join(home, "objgc.yaml")
	if err := os.WriteFile(file, []byte("require-hooks: true\nhooks:\n  dirs: ["+filepath.Join(dir, "hooks")+"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"HOME":                home,
		"OBJGC_CONFIG":        file,
		"OBJGC_SYSTEM_CONFIG": filepath.Join(home, "none.yaml"),
		"OBJGC_CACHE_DIR":     filepath.Join(home, "cache"),
	}
	runWith := func(args ...string) (int, string) {
		var errb bytes.Buffer
		s := &IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb, Getenv: func(k string) string { return env[k] }}
		return run(context.Background(), BuildInfo{}, args, s), errb.String()
	}
	if code, errb := runWith("plan", "--detailed-exitcode", model); code != ExitError || !strings.Contains(errb, "no destroy hook") {
		t.Errorf("plan with require-hooks in the file: exit %d, %q; want 1, apply would refuse", code, errb)
	}
	if code, errb := runWith("apply", model); code != ExitError || !strings.Contains(errb, "no destroy hook") {
		t.Errorf("apply with require-hooks in the file: exit %d, %q; want 1, refused", code, errb)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("a refused apply ran a hook")
	}

	for _, tc := range []struct{ file, want string }{
		{"apply:\n  require-hooks: true\n", `key "apply.require-hooks": unknown key (did you mean "require-hooks"?)`},
		{"plan:\n  no-hooks: true\n", `key "plan.no-hooks": unknown key (did you mean "no-hooks"?)`},
	} {
		if err := os.WriteFile(file, []byte(tc.file), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, errb := runWith("plan", model); code != ExitError || !strings.Contains(errb, tc.want) {
			t.Errorf("file %q: exit %d, %q; want %q", tc.file, code, errb, tc.want)
		}
	}
	env["OBJGC_CONFIG"] = filepath.Join(home, "none.yaml")
	env["OBJGC_APPLY_NO_HOOKS"] = "true"
	if code, errb := runWith("apply", model); code == ExitOK || !strings.Contains(errb, "OBJGC_APPLY_NO_HOOKS: not a setting: --no-hooks is shared by every command that has it; its variable is OBJGC_NO_HOOKS") {
		t.Errorf("OBJGC_APPLY_NO_HOOKS: exit %d, %q; want it refused, naming OBJGC_NO_HOOKS", code, errb)
	}
}
