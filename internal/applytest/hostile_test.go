package applytest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/objgc/objgc/internal/hooktest"
)

// hostileModel has doomed ids that objgc accepts but that a careless
// reader would change: non-ASCII written raw and as escapes, a line
// separator, a bidirectional override, a no-break space, an emoji written
// as a surrogate pair, a quote and a backslash; a type whose version holds
// a bidi isolate; and a live object "vm" whose id is a prefix of the
// doomed ones.
const hostileModel = `{
"Objects": {"?": {"id": "env", "type": "t.Env"}, "live": {"?": {"id": "vm", "type": "t.VM"}}, "apps": []},
"ObjectsCopy": {"?": {"id": "env", "type": "t.Env"}, "live": {"?": {"id": "vm", "type": "t.VM"}}, "apps": [
  {"?": {"id": "app-\u00e9", "type": "t.App", "dependencies": {"onDestruction": [{"subscriber": "env", "handler": "onGone"}]}},
   "vms": [
    {"?": {"id": "vm-é", "type": "t.VM"}},
    {"?": {"id": "vm-\u2028x", "type": "t.VM"}},
    {"?": {"id": "vm-\u202ertl", "type": "t.VM"}},
    {"?": {"id": "vm-\ud83d\ude00", "type": "t.VM"}},
    {"?": {"id": "vm-\u00a0nbsp", "type": "t.VM/1.0\u2066x@p"}},
    {"?": {"id": "vm-\"q\\", "type": "t.VM"}}
   ]}
]},
"Attributes": []
}
`

// hostileDoomed are the doomed ids of hostileModel, as Go strings.
var hostileDoomed = []string{"app-é", "vm-é", "vm-\u2028x", "vm-\u202ertl", "vm-😀", "vm-\u00a0nbsp", `vm-"q\`}

// hostileHook checks what a hook receives: argv's last item and
// OBJGC_OBJECT_ID agree, the id is a line of OBJGC_DOOMED (grep -qxF, as
// docs/hooks.md shows), the live "vm" and "env" are not, and the doomed
// file has one line per doomed id. It writes a terminal-hostile line to
// stderr, and blocks while $OBJGC_TEST_STATE/block names its run.
const hostileHook = `#!/bin/sh
id="$OBJGC_OBJECT_ID"
for a; do last=$a; done
k="$id ${OBJGC_HANDLER:-destroy} ${OBJGC_SUBSCRIBER_ID:--}"
t="$OBJGC_TEST_STATE/trace"
printf 'start %s\n' "$k" >> "$t"
[ "$last" = "$id" ] || printf 'ARGV-MISMATCH %s\n' "$k" >> "$t"
grep -qxF -- "$id" "$OBJGC_DOOMED" || printf 'NOT-DOOMED %s\n' "$k" >> "$t"
grep -qxF -- vm "$OBJGC_DOOMED" && printf 'LIVE-DOOMED vm %s\n' "$k" >> "$t"
grep -qxF -- env "$OBJGC_DOOMED" && printf 'LIVE-DOOMED env %s\n' "$k" >> "$t"
[ "$(wc -l < "$OBJGC_DOOMED" | tr -d ' ')" = "$(cat "$OBJGC_TEST_STATE/ndoomed")" ] || printf 'DOOMED-LINES %s\n' "$k" >> "$t"
cp "$OBJGC_DOOMED" "$OBJGC_TEST_STATE/doomed-copy"
printf 'hook says \033]0;pwned\007\033[2J%s\r\n' "$id" >&2
if [ "$(cat "$OBJGC_TEST_STATE/block" 2>/dev/null)" = "$k" ]; then
  : > "$OBJGC_TEST_STATE/blocked"
  while [ ! -e "$OBJGC_TEST_STATE/release" ]; do sleep 0.01; done
fi
printf 'done %s\n' "$k" >> "$t"
`

// TestHostileIDsCrashResume: ids that are valid Unicode but unusual reach
// the plan, the hooks (argv, environment, OBJGC_DOOMED), the journal and
// the report byte for byte. objgc is killed while the last destroy hook
// runs; the resumed run does not run again the hooks the journal recorded
// as done, which needs the journal to give back each id exactly.
func TestHostileIDsCrashResume(t *testing.T) {
	e := newEnv(t)
	model := e.writeFile("m.json", []byte(hostileModel))
	installHooks(t, e.hooks, []byte(hostileModel), hostileHook)
	e.touchState("ndoomed", "7")

	p := e.plan(model)
	var planned []string
	for id := range hooktest.Doomed(p) {
		planned = append(planned, id)
	}
	want := slices.Sorted(slices.Values(hostileDoomed))
	if slices.Sort(planned); !slices.Equal(planned, want) {
		t.Fatalf("plan dooms %q; want %q", planned, want)
	}

	// Text output shows every unusual id quoted and holds no control or
	// unprintable character.
	r := e.objgc("plan", "--hooks-dir", e.hooks, model)
	mustExit(t, r, 0)
	checkTerminalSafe(t, "plan", r.stdout+r.stderr)
	for _, s := range []string{` "vm-\u2028x" `, ` "vm-\u202ertl" `, ` "vm-\u00a0nbsp" `, ` vm-é `, ` vm-😀 `, ` vm-"q\ `, `"t.VM/1.0\u2066x@p"`} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("plan text lacks %s:\n%s", s, r.stdout)
		}
	}

	const block = "app-é destroy -"
	e.touchState("block", block)
	c, stdout, stderr := e.command("apply", "--format", "json", "--hooks-dir", e.hooks, model)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the last destroy hook to start", func() bool {
		_, err := os.Stat(filepath.Join(e.state, "blocked"))
		return err == nil
	})
	signal(t, c, syscall.SIGKILL)
	if r := e.wait(c, stdout, stderr, time.Minute); r.code != -1 {
		t.Fatalf("objgc was not killed: %s", r)
	}
	ended := journalEnded(t, model+".journal")
	e.touchState("release", "")
	waitFor(t, time.Minute, "the orphaned hook to end", func() bool { return slices.Contains(e.trace(), "done "+block) })
	if err := os.Remove(filepath.Join(e.state, "block")); err != nil {
		t.Fatal(err)
	}

	wantEnded := []string{"app-é onGone env"}
	for _, id := range hostileDoomed[1:] {
		wantEnded = append(wantEnded, id+" destroy -")
	}
	var gotEnded []string
	for k := range ended {
		gotEnded = append(gotEnded, k)
	}
	slices.Sort(gotEnded)
	if slices.Sort(wantEnded); !slices.Equal(gotEnded, wantEnded) {
		t.Fatalf("journal records as ended %q; want %q", gotEnded, wantEnded)
	}

	r = e.objgc("apply", "--format", "json", "--hooks-dir", e.hooks, model)
	mustExit(t, r, 0)
	checkTerminalSafe(t, "apply stderr", r.stderr)
	if !strings.Contains(r.stderr, `"hook says \x1b]0;pwned\a\x1b[2Japp-é"`) {
		t.Errorf("apply stderr lacks the hook's line, quoted:\n%s", r.stderr)
	}
	states := parseReport(t, r).states()
	for _, id := range hostileDoomed {
		if states[id] != "destroyed" {
			t.Errorf("report: %q is %q; want destroyed (report ids: %q)", id, states[id], states)
		}
	}

	starts := map[string]int{}
	for _, l := range e.trace() {
		if k, ok := strings.CutPrefix(l, "start "); ok {
			starts[k]++
			continue
		}
		if !strings.HasPrefix(l, "done ") {
			t.Errorf("hook: %s", l)
		}
	}
	for _, k := range wantEnded {
		if starts[k] != 1 {
			t.Errorf("hook %q started %d times; want once (the journal recorded its end)", k, starts[k])
		}
	}
	if starts[block] != 2 {
		t.Errorf("hook %q started %d times; want twice (killed before its end was recorded)", block, starts[block])
	}
	copied := strings.Split(strings.TrimSuffix(string(e.readFile("state/doomed-copy")), "\n"), "\n")
	if slices.Sort(copied); !slices.Equal(copied, want) {
		t.Errorf("OBJGC_DOOMED holds %q; want %q", copied, want)
	}

	var out struct{ Objects, ObjectsCopy json.RawMessage }
	if err := json.Unmarshal(e.readFile("m.json"), &out); err != nil {
		t.Fatal(err)
	}
	if string(out.Objects) != string(out.ObjectsCopy) || strings.Contains(string(out.ObjectsCopy), "vm-") {
		t.Errorf("written model still holds doomed objects:\n%s", e.readFile("m.json"))
	}
	if _, err := os.Stat(model + ".journal"); !os.IsNotExist(err) {
		t.Errorf("journal left after a complete run: %v", err)
	}
}

// checkTerminalSafe fails when out holds a control character (but
// newline), invalid UTF-8, or a line separator, bidi control or no-break
// space: what termsafe quotes.
func checkTerminalSafe(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s: invalid UTF-8:\n%q", what, out)
	}
	for i, r := range out {
		switch {
		case r == '\n':
		case r < 0x20 || r >= 0x7f && r <= 0x9f,
			r == 0x2028 || r == 0x2029 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0xa0:
			t.Fatalf("%s: byte %d is %U:\n%q", what, i, r, out)
		}
	}
}
