package applytest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/objgc/objgc/internal/modelgen"
)

// crashHook records each run's start and, after its work, its end:
// "start|done <id> <event> <subscriber or ->".
const crashHook = `#!/bin/sh
if [ "$1" = notify ]; then k="$3 $2"; else k="$2 $1"; fi
k="$k ${OBJGC_SUBSCRIBER_ID:--}"
echo "start $k" >> "$OBJGC_TEST_STATE/trace"
sleep 0.003
echo "done $k" >> "$OBJGC_TEST_STATE/trace"
`

// generatedModel writes a modelgen model of n objects (three tenths of
// the applications removed) as one envelope, m.json, and returns its path.
func (e *env) generatedModel(n int) string {
	e.t.Helper()
	snapPath, incPath, _, err := modelgen.WriteFiles(filepath.Join(e.dir, "gen"), modelgen.Config{Objects: n, RemoveApps: 0.3, Seed: 1, Indent: true})
	if err != nil {
		e.t.Fatal(err)
	}
	snap, err := os.ReadFile(snapPath)
	if err != nil {
		e.t.Fatal(err)
	}
	inc, err := os.ReadFile(incPath)
	if err != nil {
		e.t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString("{\n\"Objects\": ")
	b.Write(bytes.TrimSpace(inc))
	b.WriteString(",\n\"ObjectsCopy\": ")
	b.Write(bytes.TrimSpace(snap))
	b.WriteString(",\n\"Attributes\": []\n}\n")
	return e.writeFile("m.json", b.Bytes())
}

// journalEnded returns the hook runs the journal at path records as ended
// successfully, as "<id> <event> <subscriber or ->" (the hook's trace
// key), reading complete lines only.
func journalEnded(t *testing.T, path string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Phase, ID, Event, Subscriber string
			OK                           *bool
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Phase != "end" || rec.OK == nil || !*rec.OK {
			continue
		}
		sub := rec.Subscriber
		if sub == "" {
			sub = "-"
		}
		out[rec.ID+" "+rec.Event+" "+sub] = true
	}
	return out
}

func sha(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// TestCrashResume SIGKILLs objgc apply at random moments, 20 times, on a
// generated model with hundreds of doomed objects, then lets it finish.
// It checks that a hook the journal recorded as ended successfully never
// starts again, that every doomed object is destroyed and every
// notification made, that the model file is always the old or the final
// version (never a mix, never empty), and that the last run leaves nothing
// doomed.
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("kills objgc 20 times")
	}
	t.Parallel()
	e := newEnv(t)
	model := e.generatedModel(1000)
	old := e.readFile("m.json")
	installHooks(t, e.hooks, old, crashHook)
	p := e.plan(model)
	wantDone := map[string]bool{}
	for id := range p.doomed() {
		wantDone[id+" destroy -"] = true
	}
	for _, n := range p.Notifications {
		if string(n.Hook) != "null" {
			wantDone[n.Publisher+" "+n.Handler+" "+n.Subscriber] = true
		}
	}
	t.Logf("%d doomed objects, %d hook runs to complete", len(p.doomed()), len(wantDone))

	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("kill delays from seed %d", seed)

	type kill struct {
		lines int             // trace lines when objgc was dead
		ended map[string]bool // hook runs the journal had recorded as ended
	}
	var kills []kill
	seen := map[string]int{} // sha256 of the model after a kill: how often
	args := []string{"apply", "--hooks-dir", e.hooks, "--parallelism", "4", model}
	for k := 0; k < 20; k++ {
		c, stdout, stderr := e.command(args...)
		start := time.Now()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(450 * time.Millisecond))))
		c.Process.Signal(syscall.SIGKILL)
		r := e.wait(c, stdout, stderr, start, time.Minute)
		switch {
		case r.code == 0:
			// It finished before the kill.
		case r.code != -1:
			t.Fatalf("kill %d: %s", k, r)
		}
		data := e.readFile("m.json")
		if !json.Valid(data) {
			t.Fatalf("kill %d: the model is not valid JSON (%d bytes)", k, len(data))
		}
		seen[sha(data)]++
		kills = append(kills, kill{lines: len(e.trace()), ended: journalEnded(t, model+".journal")})
	}

	r := e.objgc(args...)
	mustExit(t, r, 0)
	final := e.readFile("m.json")
	if left := e.plan(model).doomed(); len(left) > 0 {
		t.Fatalf("after the last run, %d objects are still doomed", len(left))
	}
	for s, n := range seen {
		if s != sha(old) && s != sha(final) {
			t.Errorf("after %d kills the model was neither the old nor the final version (sha256 %.12s)", n, s)
		}
	}
	t.Logf("model after the kills: old %d times, final %d times", seen[sha(old)], seen[sha(final)])

	trace := e.trace()
	done := map[string]int{}
	for i, l := range trace {
		f := strings.SplitN(l, " ", 2)
		if len(f) != 2 {
			t.Fatalf("trace line %d: %q", i+1, l)
		}
		switch f[0] {
		case "start":
			for k, kl := range kills {
				if i >= kl.lines && kl.ended[f[1]] {
					t.Errorf("trace line %d: hook %s started again after the journal recorded its success (kill %d)", i+1, f[1], k)
				}
			}
		case "done":
			done[f[1]]++
		}
	}
	twice := 0
	for key := range wantDone {
		switch n := done[key]; {
		case n == 0:
			t.Errorf("hook %s never completed", key)
		case n > 1:
			twice++
		}
	}
	for key := range done {
		if !wantDone[key] {
			t.Errorf("hook %s ran, but the plan has no such hook run", key)
		}
	}
	// A hook completes twice only when objgc was killed after the hook
	// ended and before its end record was fsynced: at most one per
	// running hook per kill.
	if twice > 4*len(kills) {
		t.Errorf("%d hooks completed twice in %d kills", twice, len(kills))
	}
	t.Logf("%d of %d hook runs completed twice (killed before their end record)", twice, len(wantDone))
	if tmp, _ := filepath.Glob(filepath.Join(e.dir, ".m.json.tmp-*")); len(tmp) > 0 {
		t.Logf("write-back temporary files left by kills: %d", len(tmp))
	}
}
