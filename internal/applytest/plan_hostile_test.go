package applytest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// objgc's exit statuses these tests expect (README.md, "Exit status").
const (
	exitOK    = 0
	exitError = 1
)

// hostileStrings are written into models as JSON string contents (escapes
// as JSON reads them) or, for hooks, as the bytes a hook prints. refused
// says whether objgc refuses it in an id; syntax whether the whole file is
// then not JSON text (invalid UTF-8).
var hostileStrings = []struct {
	name, json string
	raw        string // the decoded bytes
	refused    bool
	syntax     bool
}{
	{"ESC", `a\u001bb`, "a\x1bb", true, false},
	{"CSI clear", `a\u001b[2J`, "a\x1b[2J", true, false},
	{"OSC retitle", `a\u001b]0;x\u0007`, "a\x1b]0;x\a", true, false},
	{"BEL", `a\u0007`, "a\a", true, false},
	{"CR", `a\r0 to destroy`, "a\r0 to destroy", true, false},
	{"LF", `app1\nroot`, "app1\nroot", true, false},
	{"NUL", `a\u0000b`, "a\x00b", true, false},
	{"DEL", `a\u007fb`, "a\x7fb", true, false},
	{"C1 CSI", `a\u009b2J`, "a\u009b2J", true, false},
	{"C1 NEL raw", "a\u0085b", "a\u0085b", true, false},
	{"line separator", `a\u2028b`, "a\u2028b", false, false},
	{"bidi override", `a\u202eb`, "a\u202eb", false, false},
	{"bidi isolate raw", "a\u2067b\u2069", "a\u2067b\u2069", false, false},
	{"lone surrogate", `vm-\ud800`, "", true, false},
	{"invalid UTF-8", "a\xffb", "a\xffb", true, true},
	{"overlong", "a\xc0\xafb", "a\xc0\xafb", true, true},
	{"UTF-8 surrogate", "a\xed\xa0\x80b", "a\xed\xa0\x80b", true, true},
}

// keyedModel dooms one object with id ID under the key KEY, with a
// handler HANDLER notifying "env", of type t.VM/VERSION@p.
func keyedModel(key, id, handler, version string) string {
	return fmt.Sprintf(`{"Objects": {"?": {"id": "env", "type": "t.Env"}, "apps": []},
"ObjectsCopy": {"?": {"id": "env", "type": "t.Env"}, "apps": [{"%s": {"?": {"id": "%s", "type": "t.VM/%s@p",
  "dependencies": {"onDestruction": [{"subscriber": "env", "handler": "%s"}]}}}}]}}
`, key, id, version, handler)
}

// in returns e for the subtest t: the same work directory, t's failures.
func (e *env) in(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// checkSafe fails when text output holds a control character but
// newline, invalid UTF-8, or an unprintable rune (line separator, bidi
// control): objgc must show those escaped.
func checkSafe(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: invalid UTF-8:\n%q", what, out)
		return
	}
	for i, r := range out {
		if r != '\n' && r != '\t' && !strconv.IsPrint(r) {
			t.Errorf("%s: byte %d is %U:\n%q", what, i, r, out)
			return
		}
	}
}

// TestHostileIDs: each hostile string as an id, a type's version and a
// handler name. Refused ones stop plan and apply with exit 1 and the JSON
// path; accepted ones are shown quoted in text output and exact in JSON.
func TestHostileIDs(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	// An empty hooks dir: apply runs no hook, and a missing one would be
	// refused before the model is read.
	if err := os.Mkdir(filepath.Join(dir, "none"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, h := range hostileStrings {
		fields := []struct{ what, path, model string }{
			{"id", `$.ObjectsCopy.apps[0].k["?"].id`, keyedModel("k", h.json, "onGone", "1")},
			{"version", `$.ObjectsCopy.apps[0].k["?"].type`, keyedModel("k", "vm-1", "onGone", h.json)},
			{"handler", `$.ObjectsCopy.apps[0].k["?"].dependencies.onDestruction[0].handler`, keyedModel("k", "vm-1", h.json, "1")},
		}
		for _, f := range fields {
			t.Run(h.name+"/"+f.what, func(t *testing.T) {
				t.Parallel() // each case its own model file: the runs are processes
				model := filepath.Join(dir, fmt.Sprintf("m%d-%s.json", i, f.what))
				if err := os.WriteFile(model, []byte(f.model), 0o644); err != nil {
					t.Fatal(err)
				}
				for _, args := range [][]string{
					{"plan", model}, {"plan", "--format", "json", model}, {"plan", "--format", "dot", model},
					{"apply", "--hooks-dir", filepath.Join(dir, "none"), "--write", model + ".out", model},
				} {
					r := e.in(t).objgc(args...)
					code, stdout, stderr := r.code, r.stdout, r.stderr
					checkSafe(t, strings.Join(args[:1], " ")+" stdout", stdout)
					checkSafe(t, strings.Join(args[:1], " ")+" stderr", stderr)
					if h.refused {
						if code != exitError || stdout != "" {
							t.Fatalf("%q: exit %d, stdout %q; want exit 1 and nothing", args, code, stdout)
						}
						want := f.path
						if h.syntax {
							want = "invalid UTF-8"
						}
						if !strings.Contains(stderr, want) || !strings.Contains(stderr, model) {
							t.Errorf("%q: stderr %q; want the file and %q", args, stderr, want)
						}
						continue
					}
					if code != exitOK {
						t.Fatalf("%q: exit %d\n%s%s", args, code, stdout, stderr)
					}
					if args[1] == "--format" && args[2] == "json" {
						var doc struct {
							Groups []struct {
								Objects []struct{ ID, Type string }
							}
							Notifications []struct{ Handler string }
						}
						if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
							t.Fatal(err)
						}
						o := doc.Groups[0].Objects[0]
						got := map[string]string{"id": o.ID, "version": o.Type, "handler": doc.Notifications[0].Handler}[f.what]
						want := map[string]string{"id": h.raw, "version": "t.VM/" + h.raw + "@p", "handler": h.raw}[f.what]
						if got != want {
							t.Errorf("JSON plan %s %q; want %q", f.what, got, want)
						}
					}
					shown := strconv.Quote(h.raw)
					if f.what == "version" {
						shown = strconv.Quote("t.VM/" + h.raw + "@p")
					}
					if args[0] == "plan" && len(args) == 2 && !strings.Contains(stdout, shown) {
						t.Errorf("plan text does not show %s:\n%s", shown, stdout)
					}
				}
			})
		}
	}
}

// TestHostileKeysInPaths: a key is never refused for what it holds (only
// invalid UTF-8 is), but the JSON path that names it is shown escaped.
func TestHostileKeysInPaths(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	for i, h := range hostileStrings {
		if h.syntax || h.raw == "" {
			continue
		}
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			model := filepath.Join(dir, fmt.Sprintf("k%d.json", i))
			if err := os.WriteFile(model, []byte(keyedModel(h.json, "vm-1", "onGone", "1")), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"plan", model}, {"plan", "--format", "dot", model}} {
				r := e.in(t).objgc(args...)
				code, stdout, stderr := r.code, r.stdout, r.stderr
				if code != exitOK {
					t.Fatalf("%q: exit %d\n%s", args, code, stderr)
				}
				checkSafe(t, "stdout", stdout)
			}
			r := e.in(t).objgc("plan", "--format", "json", model)
			code, stdout, _ := r.code, r.stdout, r.stderr
			if code != exitOK {
				t.Fatal(code)
			}
			var doc struct {
				Groups []struct{ Objects []struct{ Path string } }
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatal(err)
			}
			key, _ := json.Marshal(h.raw)
			if got, want := doc.Groups[0].Objects[0].Path, "$.ObjectsCopy.apps[0]["+string(key)+"]"; got != want {
				t.Errorf("path %q; want %q", got, want)
			}
		})
	}
}
