package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/objgc/objgc/cmd"
)

// run calls cmd.Run in-process with args and stdin and returns the exit
// status, stdout and stderr. The user's configuration directory and
// OBJGC_* variables are kept out.
func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cmd.Run(context.Background(), cmd.BuildInfo{Version: "test"}, args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// isolate keeps the environment and the user's configuration out of a test.
func isolate(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("HOME", dir)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OBJGC_") || k == "NO_COLOR" {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

const pairs = "../testdata/pairs/"

func TestRunPlanExitCodes(t *testing.T) {
	isolate(t)
	appRemoved, err := os.ReadFile(pairs + "app-removed.json")
	if err != nil {
		t.Fatal(err)
	}
	const usageHint = "Run 'objgc plan --help' for usage.\n"
	tests := []struct {
		name       string
		args       []string
		stdin      string
		code       int
		stdout     string // exact when wantExact, else a substring
		exact      bool
		stderr     string // exact
		stdoutNone bool
	}{
		{name: "nothing to destroy", args: []string{"plan", pairs + "app-moved.json"}, code: cmd.ExitOK, exact: true,
			stdout: "Plan for ../testdata/pairs/app-moved.json\nNothing to destroy.\n\n0 to destroy in 0 groups, 0 notifications, 0 warnings, 0 dropped.\n"},
		{name: "nothing to destroy, detailed", args: []string{"plan", "--detailed-exitcode", pairs + "app-moved.json"}, code: cmd.ExitOK,
			stdout: "Nothing to destroy.\n"},
		{name: "work found", args: []string{"plan", pairs + "app-removed.json"}, code: cmd.ExitOK,
			stdout: "\n3 to destroy in 2 groups, 0 notifications, 0 warnings, 0 dropped, 3 without a destroy hook.\n"},
		{name: "work found, detailed", args: []string{"plan", "--detailed-exitcode", pairs + "app-removed.json"}, code: cmd.ExitWorkFound,
			stdout: "Destroy 3 objects in 2 groups, deepest first:\n"},
		{name: "work found, detailed, json", args: []string{"plan", "--detailed-exitcode", "--format", "json", pairs + "environment-deleted.json"}, code: cmd.ExitWorkFound,
			stdout: `"format_version": "2"`},
		{name: "stdin", args: []string{"plan", "-"}, stdin: string(appRemoved), code: cmd.ExitOK,
			stdout: "Plan for <stdin>\nDestroy 3 objects"},
		{name: "snapshot and graph", args: []string{"plan", "--snapshot", "../testdata/models/model.json", "--graph", "../testdata/models/model_renamed.json"}, code: cmd.ExitOK,
			stdout: "Plan for ../testdata/models/model.json -> ../testdata/models/model_renamed.json\nNothing to destroy.\n"},
		{name: "graph from stdin", args: []string{"plan", "--detailed-exitcode", "--snapshot", pairs + "app-removed.json", "--graph", "-"}, stdin: string(appRemoved), code: cmd.ExitWorkFound,
			stdout: "Plan for ../testdata/pairs/app-removed.json -> <stdin>\n"},
		{name: "bad input", args: []string{"plan", "-"}, stdin: `{"Objects": {"?": {"id": 5}}}`, code: cmd.ExitError, stdoutNone: true,
			stderr: "objgc: <stdin>: $.Objects[\"?\"].id: the id must be a string\n"},
		{name: "invalid JSON", args: []string{"plan", "-"}, stdin: "{\"Objects\":\n [}", code: cmd.ExitError, stdoutNone: true,
			stderr: "objgc: <stdin>:2:3: invalid JSON at $.Objects[0]: unexpected '}'; expected a value\n"},
		{name: "empty stdin", args: []string{"plan", "-"}, code: cmd.ExitError, stdoutNone: true,
			stderr: "objgc: <stdin>:1:1: invalid JSON at $: the input is empty; expected a JSON object or array\n"},
		{name: "missing file", args: []string{"plan", "nope.json"}, code: cmd.ExitError, stdoutNone: true,
			stderr: "objgc: nope.json: no such file; expected a Murano model (JSON)\n"},
		{name: "directory", args: []string{"plan", pairs}, code: cmd.ExitError, stdoutNone: true,
			stderr: "objgc: ../testdata/pairs/: is a directory; expected a Murano model file (JSON)\n"},
		{name: "missing graph", args: []string{"plan", "--snapshot", pairs + "app-removed.json", "--graph", "nope.json"}, code: cmd.ExitError, stdoutNone: true,
			stderr: "objgc: nope.json: no such file; expected a Murano model (JSON)\n"},
		{name: "bare tree as MODEL", args: []string{"plan", "../testdata/models/model.json"}, code: cmd.ExitError, stdoutNone: true,
			stderr: `objgc: ../testdata/models/model.json: $: expected a Murano envelope {"Objects": ..., "ObjectsCopy": ...} or an engine task {"model": ...}; for two bare object trees use --snapshot and --graph` + "\n"},
		{name: "MODEL and --snapshot", args: []string{"plan", pairs + "app-removed.json", "--snapshot", "a", "--graph", "b"}, code: cmd.ExitError, stdoutNone: true,
			stderr: "objgc: give MODEL or --snapshot and --graph, not both\n" + usageHint},
		{name: "--snapshot alone", args: []string{"plan", "--snapshot", "a"}, code: cmd.ExitError, stdoutNone: true,
			stderr: "objgc: --snapshot and --graph go together\n" + usageHint},
		{name: "no model", args: []string{"plan"}, code: cmd.ExitError, stdoutNone: true,
			stderr: "objgc: no model given: objgc plan MODEL, or --snapshot FILE --graph FILE\n" + usageHint},
		{name: "bad format", args: []string{"plan", "--format", "yaml", pairs + "app-removed.json"}, code: cmd.ExitError, stdoutNone: true,
			stderr: "objgc: --format must be text, json, dot or markdown, not \"yaml\"\n" + usageHint},
		{name: "bad on-dangling", args: []string{"plan", "--on-dangling", "drop", pairs + "app-removed.json"}, code: cmd.ExitError, stdoutNone: true,
			stderr: "objgc: --on-dangling must be error or keep, not \"drop\"\n" + usageHint},
		{name: "unknown flag", args: []string{"plan", "--frobnicate"}, code: cmd.ExitError, stdoutNone: true,
			stderr: "objgc: unknown flag: --frobnicate\n" + usageHint},
		{name: "version", args: []string{"version", "--format", "json"}, code: cmd.ExitOK,
			stdout: `"version": "test"`},
		{name: "bad version format", args: []string{"version", "--format", "xml"}, code: cmd.ExitError, stdoutNone: true,
			stderr: "objgc: --format must be text or json, not \"xml\"\nRun 'objgc version --help' for usage.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Errorf("exit status %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			switch {
			case tt.stdoutNone && stdout != "":
				t.Errorf("stdout = %q, want nothing", stdout)
			case tt.exact && stdout != tt.stdout:
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tt.stdout)
			case !tt.exact && !strings.Contains(stdout, tt.stdout):
				t.Errorf("stdout:\n%s\nwant it to contain:\n%s", stdout, tt.stdout)
			}
			if stderr != tt.stderr {
				t.Errorf("stderr = %q, want %q", stderr, tt.stderr)
			}
		})
	}
}

func TestRunPlanJSON(t *testing.T) {
	isolate(t)
	code, stdout, stderr := run(t, "", "plan", "--format", "json", pairs+"region-removed-handlers.json")
	if code != cmd.ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var doc struct {
		FormatVersion string `json:"format_version"`
		Inputs        []struct{ Role, Path, SHA256 string }
		Groups        []struct {
			Index   int
			Objects []struct{ ID, Path string }
		}
		Notifications []struct {
			Group                          int
			Publisher, Subscriber, Handler string
		}
		Summary struct {
			Destroy       int  `json:"destroy"`
			Notifications int  `json:"notifications"`
			ApplyRefuses  bool `json:"apply_refuses"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.FormatVersion != cmd.PlanFormatVersion || !filepath.IsAbs(doc.Inputs[0].Path) || len(doc.Inputs) != 1 || doc.Inputs[0].Role != "model" || len(doc.Inputs[0].SHA256) != 64 {
		t.Errorf("header: %+v", doc)
	}
	if len(doc.Groups) != 2 || doc.Groups[0].Index != 2 || doc.Groups[0].Objects[0].Path != "$.ObjectsCopy.regions.RegionTwo.defaultNetworks.environment" {
		t.Errorf("groups: %+v", doc.Groups)
	}
	if len(doc.Notifications) != 2 || doc.Notifications[0].Handler != "onRegionRemoved" || doc.Notifications[0].Group != 1 {
		t.Errorf("notifications: %+v", doc.Notifications)
	}
	if doc.Summary.Destroy != 2 || doc.Summary.Notifications != 2 || doc.Summary.ApplyRefuses {
		t.Errorf("summary: %+v", doc.Summary)
	}
}

func TestRunPlanOut(t *testing.T) {
	isolate(t)
	out := filepath.Join(t.TempDir(), "plan.json")
	code, stdout, stderr := run(t, "", "plan", "--out", out, pairs+"app-removed.json")
	if code != cmd.ExitOK || stderr != "" || !strings.HasPrefix(stdout, "Plan for ") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	saved, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	_, asJSON, _ := run(t, "", "plan", "--format", "json", pairs+"app-removed.json")
	if string(saved) != asJSON {
		t.Errorf("saved plan differs from --format json:\n%s\n%s", saved, asJSON)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestRunPlanNoColor(t *testing.T) {
	isolate(t)
	for _, env := range []string{"", "1"} {
		t.Setenv("NO_COLOR", env)
		for _, args := range [][]string{{"plan", pairs + "dangling-reference.json"}, {"plan", "--no-color", pairs + "dangling-reference.json"}} {
			_, stdout, _ := run(t, "", args...)
			if strings.Contains(stdout, "\x1b[") {
				t.Errorf("NO_COLOR=%q %v: escape codes in %q", env, args, stdout)
			}
		}
	}
}

func TestRunConfigPrecedence(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "objgc.yaml"), []byte("plan:\n  format: json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	model, err := filepath.Abs(pairs + "app-removed.json")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	check := func(what, prefix string, args ...string) {
		t.Helper()
		code, stdout, stderr := run(t, "", append([]string{"plan"}, append(args, model)...)...)
		if code != cmd.ExitOK || !strings.HasPrefix(stdout, prefix) {
			t.Errorf("%s: exit %d, stdout %.40q, stderr %q; want it to start with %q", what, code, stdout, stderr, prefix)
		}
	}
	check("./objgc.yaml", "{\n")
	t.Setenv("OBJGC_PLAN_FORMAT", "dot")
	check("OBJGC_PLAN_FORMAT over the file", "digraph objgc_plan {\n")
	check("flag over OBJGC_PLAN_FORMAT", "Plan for ", "--format", "text")
	os.Remove("objgc.yaml")
	os.Unsetenv("OBJGC_PLAN_FORMAT")
	check("default", "Plan for ")
}
