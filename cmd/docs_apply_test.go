package cmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestApplyJSONExampleInDocs runs the apply that docs/apply.md's JSON
// example describes (a destroy hook failing, the object it blocks, a
// notification hook and a handler without one) and compares its report
// with the example, as JSON, with the hooks dir written as
// /etc/objgc/hooks and durations left out: a change of the report's
// layout shows here until the page follows.
func TestApplyJSONExampleInDocs(t *testing.T) {
	isolate(t)
	doc, err := os.ReadFile(filepath.Join("..", "docs", "apply.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "### JSON (`--format json`)\n\n```json\n")
	if !ok {
		t.Fatal("docs/apply.md: no JSON example under \"### JSON (`--format json`)\"")
	}
	example, _, _ := strings.Cut(after, "```\n")

	dir := t.TempDir()
	hooks := filepath.Join(dir, "hooks")
	for path, body := range map[string]string{
		"io.murano.resources.NeutronNetwork/destroy":   "#!/bin/sh\necho 'network still has ports' >&2\nexit 3\n",
		"io.murano.Environment/notify/onRegionRemoved": "#!/bin/sh\nexit 0\n",
	} {
		p := filepath.Join(hooks, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	model, err := os.ReadFile(filepath.Join("..", "testdata", "pairs", "region-removed-handlers.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.json"), model, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, stdout, stderr := run(t, "", "apply", "--hooks-dir", hooks, "--format", "json", "model.json")
	if code != 3 {
		t.Fatalf("exit %d, want 3; stderr:\n%s", code, stderr)
	}
	normal := func(s string) any {
		s = strings.ReplaceAll(s, hooks, "/etc/objgc/hooks")
		s = regexp.MustCompile(`"duration_ms": *[0-9]+`).ReplaceAllString(s, `"duration_ms": 0`)
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("%v in\n%s", err, s)
		}
		return v
	}
	if got, want := normal(stdout), normal(example); !reflect.DeepEqual(got, want) {
		t.Errorf("docs/apply.md's JSON example is not what apply prints; apply printed (hooks dir as /etc/objgc/hooks):\n%s", strings.ReplaceAll(stdout, hooks, "/etc/objgc/hooks"))
	}
}
