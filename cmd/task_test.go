package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// applyFile runs objgc apply --no-hooks (these tests are about the
// write-back, and have no hooks) on a copy of data and returns what it
// wrote.
func applyFile(t *testing.T, data []byte) []byte {
	t.Helper()
	model := filepath.Join(t.TempDir(), "m.json")
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	streams := &IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	if code := run(context.Background(), BuildInfo{}, []string{"apply", "--no-hooks", model}, streams); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	written, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	return written
}

// TestApplyWritesEngineTaskBack: apply on an engine task rewrites the
// task, not just its envelope: every byte outside "model" stays, and
// "model" is what apply writes for the same envelope on its own, indented
// as the task's member. A task with nothing to do comes back byte for
// byte.
func TestApplyWritesEngineTaskBack(t *testing.T) {
	t.Setenv("OBJGC_CACHE_DIR", t.TempDir())
	task, err := os.ReadFile("../testdata/pairs/task-region-removed.json")
	if err != nil {
		t.Fatal(err)
	}
	model := gjson.GetBytes(task, "model")
	got := applyFile(t, task)
	if !bytes.HasPrefix(got, task[:model.Index]) {
		t.Errorf("the bytes before \"model\" changed:\n%s", got[:min(len(got), model.Index+40)])
	}
	tail := task[model.Index+len(model.Raw):]
	if !bytes.HasSuffix(got, tail) {
		t.Errorf("the bytes after \"model\" changed: want suffix %q", tail)
	}
	if !json.Valid(got) {
		t.Fatalf("output is not JSON:\n%s", got)
	}
	var gotModel, wantModel any
	json.Unmarshal([]byte(gjson.GetBytes(got, "model").Raw), &gotModel)
	json.Unmarshal(applyFile(t, []byte(model.Raw)), &wantModel)
	if a, b := mustJSON(t, gotModel), mustJSON(t, wantModel); a != b {
		t.Errorf("task's model differs from the envelope's write-back:\ntask:     %.300s\nenvelope: %.300s", a, b)
	}
	if gjson.GetBytes(got, "action.method").String() != "deploy" {
		t.Errorf("action lost: %.200s", got)
	}

	// Nothing to do: ObjectsCopy = Objects, written as json.dump(indent=2)
	// would (the shape of the pairs in testdata/).
	idle := strings.Replace(string(task), `"ObjectsCopy"`, `"ObjectsCopyOld"`, 1)
	var doc map[string]any
	if err := json.Unmarshal([]byte(idle), &doc); err != nil {
		t.Fatal(err)
	}
	m := doc["model"].(map[string]any)
	m["ObjectsCopy"] = m["Objects"]
	delete(m, "ObjectsCopyOld")
	same := []byte(`{
  "action": ` + indentJSON(t, doc["action"], "  ") + `,
  "model": {
    "Objects": ` + indentJSON(t, m["Objects"], "    ") + `,
    "ObjectsCopy": ` + indentJSON(t, m["Objects"], "    ") + `,
    "Attributes": ` + indentJSON(t, m["Attributes"], "    ") + `
  }
}
`)
	if out := applyFile(t, same); !bytes.Equal(out, same) {
		t.Errorf("an idle task did not come back byte for byte:\n%s", out)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func indentJSON(t *testing.T, v any, prefix string) string {
	t.Helper()
	b, err := json.MarshalIndent(v, prefix, "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestApplyEnvelopeWithModelKey: an envelope that also has a "model" key
// is an envelope (docs/decisions.md), written back as one.
func TestApplyEnvelopeWithModelKey(t *testing.T) {
	t.Setenv("OBJGC_CACHE_DIR", t.TempDir())
	doc := []byte(`{"model": {"note": "not a task"}, "Objects": {"?": {"id": "env", "type": "E"}}, "ObjectsCopy": {"?": {"id": "env", "type": "E"}, "a": {"?": {"id": "a", "type": "T"}}}, "Attributes": []}`)
	got := applyFile(t, doc)
	if gjson.GetBytes(got, "model").Exists() || !gjson.GetBytes(got, "Objects.?.id").Exists() || gjson.GetBytes(got, "ObjectsCopy.a").Exists() {
		t.Errorf("written back:\n%s", got)
	}
}
