package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/objgc/objgc/destroy"
)

// TestStreamedPlanReadsBack checks the streamed JSON plan (planJSON.write)
// against encoding/json: the plan printed and the plan saved with --out
// are the same bytes; ParsePlanFile reads them back; the plan read back,
// encoded whole as before (writeJSON), gives those bytes again. Models:
// the golden pairs with the example hooks (destroy hooks with sha256,
// notify hooks, classes) and a hostile one whose ids, types, handlers and
// paths hold HTML characters, escapes, controls, a bidirectional override,
// a line separator and a rune above U+FFFF.
func TestStreamedPlanReadsBack(t *testing.T) {
	t.Setenv("OBJGC_CACHE_DIR", t.TempDir())
	dir := t.TempDir()
	hostile := filepath.Join(dir, "hostile.json")
	if err := os.WriteFile(hostile, []byte(`{"Objects": {"?": {"id": "env", "type": "t.Env"}, "apps": []},
"ObjectsCopy": {"?": {"id": "env", "type": "t.Env"}, "apps": [
  {"?": {"id": "a<b>&c\u202e\u2028\"\\😀", "type": "t.App/1.0@p.q"},
   "key\u202e\u0085\u007f\u001bweird<>": [{"?": {"id": "child\u200f", "type": "t.Child",
     "dependencies": {"onDestruction": [{"subscriber": "env", "handler": "on\u202eGone<&>"}]}}}]},
  {"?": {"id": "plain", "type": "t.App"}}
]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	models := []string{hostile}
	for _, tc := range goldenCases {
		if len(tc.args) == 1 {
			models = append(models, tc.args[0])
		}
	}
	for _, model := range models {
		t.Run(filepath.Base(model), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "plan.json")
			code, stdout, stderr := runCmd(t, "", "plan", "--format", "json", "--hooks-dir", "../testdata/hooks/example", "--out", out, model)
			if code != ExitOK {
				t.Fatalf("plan: exit %d: %s", code, stderr)
			}
			saved, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(saved, []byte(stdout)) {
				t.Fatalf("--out and stdout differ:\n%s\n---\n%s", saved, stdout)
			}
			sp, err := destroy.ParsePlanFile(out, saved)
			if err != nil || sp == nil {
				t.Fatalf("ParsePlanFile: %v, %v", sp, err)
			}
			var whole bytes.Buffer
			if err := writeJSON(&whole, sp); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(whole.Bytes(), saved) {
				t.Fatalf("streamed plan and the plan read back encoded whole differ:\n%s\n---\n%s", saved, whole.Bytes())
			}
			again, err := destroy.ParsePlanFile(out, whole.Bytes())
			if err != nil || !reflect.DeepEqual(again, sp) {
				t.Fatalf("read back differently: %v", err)
			}
			if model == hostile {
				if sp.Summary.Destroy != 3 || len(sp.Groups) == 0 || len(sp.Notifications) != 1 {
					t.Fatalf("hostile plan: %+v", sp.Summary)
				}
				for _, bad := range []string{"\u202e", "\u2028", "\u0085", "\u007f", "\u200f", "\x1b"} {
					if strings.Contains(stdout, bad) {
						t.Errorf("plan holds %q unescaped", bad)
					}
				}
				if !strings.Contains(stdout, `a<b>&c\u202e`) || !strings.Contains(stdout, "😀") {
					t.Errorf("plan escapes differently than encoding/json with termsafe.JSON:\n%s", stdout)
				}
			}
		})
	}
}
