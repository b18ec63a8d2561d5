package applytest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/objgc/objgc/internal/hooktest"
	"github.com/objgc/objgc/internal/modelgen"
	"github.com/objgc/objgc/internal/stresstest"
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

// journalLines returns the complete lines of the journal at path (none
// when there is no journal).
func journalLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		return strings.Split(string(data[:i]), "\n")
	}
	return nil
}

// startedWork reports whether a run that was killed left hook work
// started and not committed: the journal after it (after) has no commit
// record, and holds a hook start record that the journal before it
// (before) did not. A journal is only ever appended to, or replaced with
// a new one after a commit; a replaced journal shares no lines with the
// old one.
func startedWork(before, after []string) bool {
	if len(after) == 0 || len(before) > 0 && (len(after) < len(before) || after[0] != before[0]) {
		before = nil // a new journal
	}
	for _, l := range after {
		if strings.Contains(l, `"committed":`) {
			return false
		}
	}
	for _, l := range after[min(len(before), len(after)):] {
		if strings.Contains(l, `"phase":"start"`) {
			return true
		}
	}
	return false
}

func sha(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// TestCrashResume SIGKILLs objgc apply again and again on a generated
// model with hundreds of doomed objects, then lets it finish. It checks
// that a hook the journal recorded as ended successfully never starts
// again, that every doomed object is destroyed and every notification
// made, that the model file is always the old or the final version
// (never a mix, never empty), and that the last run leaves nothing
// doomed.
//
// The default run kills 4 times (1,000-object model), each once the hooks' trace has grown by
// a number of lines drawn from the seed: every kill lands while hooks
// run. OBJGC_STRESS=1 kills 20 times (4,000 objects): a quarter of the kills after a
// random delay from the start (0 to 450 ms: they may land while the model
// is read or written back, or after the run ended), the others after a
// random number of trace lines and up to 5 ms more. Every kill must land
// mid-run (the journal shows hook work this run started and no commit)
// in the default run, and at least half of them in stress mode, else the
// test fails instead of passing without having tested anything.
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("kills objgc again and again")
	}
	t.Parallel()
	stress, seed := stresstest.Mode(t)
	kills, objects := 4, 1000
	if stress {
		// Enough work that the last of the 20 runs still has some.
		kills, objects = 20, 4000
	}
	e := newEnv(t)
	model := e.generatedModel(objects)
	old := e.readFile("m.json")
	installHooks(t, e.hooks, old, crashHook)
	p := e.plan(model)
	wantDone := map[string]bool{}
	for id := range hooktest.Doomed(p) {
		wantDone[id+" destroy -"] = true
	}
	for _, n := range p.Notifications {
		if n.Hook != nil {
			wantDone[n.Publisher+" "+n.Handler+" "+n.Subscriber] = true
		}
	}
	t.Logf("%d doomed objects, %d hook runs to complete", len(hooktest.Doomed(p)), len(wantDone))
	rng := rand.New(rand.NewPCG(seed, 1))

	type kill struct {
		lines int             // trace lines when objgc was dead
		ended map[string]bool // hook runs the journal had recorded as ended
	}
	var killed []kill
	midRun := 0
	seen := map[string]int{} // sha256 of the model after a kill: how often
	args := []string{"apply", "--hooks-dir", e.hooks, "--parallelism", "4", model}
	journal := model + ".journal"
	for k := 0; k < kills; k++ {
		before := journalLines(t, journal)
		c, stdout, stderr := e.command(args...)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		var werr error
		go func() { werr = c.Wait(); close(exited) }()
		switch {
		case stress && rng.IntN(4) == 0:
			time.Sleep(time.Duration(rng.Int64N(int64(450 * time.Millisecond)))) // a random moment is the point
		default:
			want := len(e.trace()) + rng.IntN(60)
			if !stress {
				want++ // at least one hook has started
			}
			waitFor(t, time.Minute, "the trace to grow", func() bool {
				select {
				case <-exited:
					return true
				default:
					return len(e.trace()) >= want
				}
			})
			if stress {
				time.Sleep(time.Duration(rng.IntN(5000)) * time.Microsecond) // a random moment after that is the point
			}
		}
		c.Process.Signal(syscall.SIGKILL)
		select {
		case <-exited:
		case <-time.After(time.Minute):
			t.Fatalf("kill %d: objgc still runs a minute after SIGKILL", k)
		}
		r := result{stdout: stdout.String(), stderr: stderr.String()}
		var ee *exec.ExitError
		switch {
		case werr == nil:
			// It finished before the kill.
		case errors.As(werr, &ee) && ee.ExitCode() == -1:
			r.code = -1
		default:
			t.Fatalf("kill %d: %v\n%s", k, werr, r)
		}
		if r.code == -1 && startedWork(before, journalLines(t, journal)) {
			midRun++
		}
		data := e.readFile("m.json")
		if !json.Valid(data) {
			t.Fatalf("kill %d: the model is not valid JSON (%d bytes)", k, len(data))
		}
		seen[sha(data)]++
		killed = append(killed, kill{lines: len(e.trace()), ended: journalEnded(t, journal)})
	}
	t.Logf("%d of %d kills landed mid-run", midRun, kills)
	if want := map[bool]int{false: kills, true: kills / 2}[stress]; midRun < want {
		t.Fatalf("%d of %d kills landed mid-run, want at least %d: the test did not test a killed apply", midRun, kills, want)
	}

	r := e.objgc(args...)
	mustExit(t, r, 0)
	final := e.readFile("m.json")
	if left := hooktest.Doomed(e.plan(model)); len(left) > 0 {
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
			for k, kl := range killed {
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
	if twice > 4*len(killed) {
		t.Errorf("%d hooks completed twice in %d kills", twice, len(killed))
	}
	t.Logf("%d of %d hook runs completed twice (killed before their end record)", twice, len(wantDone))
	if tmp, _ := filepath.Glob(filepath.Join(e.dir, ".m.json.tmp-*")); len(tmp) > 0 {
		t.Logf("write-back temporary files left by kills: %d", len(tmp))
	}
}
