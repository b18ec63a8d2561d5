package applytest

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPlanInterruptedInEveryStage: SIGINT or SIGTERM stops objgc plan with
// exit 130 whatever stage it is in (reading, comparing, ordering, looking
// up hooks, rendering), on a model large enough that each stage takes a
// while: a stage that did not look at the signal would run to its end and
// let the plan exit 0.
//
// The plan says which stage it enters on stderr (the hidden
// OBJGC_TEST_STAGES hook); the test signals it when it reads that line,
// then allows it 5 seconds to exit. Promptness is the requirement here, so
// the bound is an assertion on it: generous, as the machine may be busy.
func TestPlanInterruptedInEveryStage(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 300,000-object model")
	}
	t.Parallel()
	e := newEnv(t)
	model := e.generatedModel(300_000)
	if err := os.MkdirAll(e.hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		stage string
		sig   syscall.Signal
	}{
		{"read", syscall.SIGINT},
		{"read", syscall.SIGTERM},
		{"compare", syscall.SIGTERM},
		{"order", syscall.SIGINT},
		{"hooks", syscall.SIGTERM},
		{"render", syscall.SIGINT},
		{"render", syscall.SIGTERM},
	}
	for _, tc := range cases {
		t.Run(tc.stage+"-"+tc.sig.String(), func(t *testing.T) {
			c := exec.Command(objgcBin, "plan", "--format", "json", "--hooks-dir", e.hooks, model)
			c.Dir = e.dir
			c.Env = append(e.environ(), "OBJGC_TEST_STAGES=1")
			stderr, err := c.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			var seen []string
			lines := bufio.NewScanner(stderr)
			for lines.Scan() {
				seen = append(seen, lines.Text())
				if lines.Text() == "objgc: stage "+tc.stage {
					break
				}
			}
			if len(seen) == 0 || seen[len(seen)-1] != "objgc: stage "+tc.stage {
				c.Wait()
				t.Fatalf("plan ended without entering stage %s; stderr:\n%s", tc.stage, strings.Join(seen, "\n"))
			}
			signal(t, c, tc.sig)
			sent := time.Now()
			rest := make(chan string, 1)
			go func() {
				var b strings.Builder
				for lines.Scan() {
					b.WriteString(lines.Text() + "\n")
				}
				rest <- b.String()
			}()
			// The pipe ends when the plan exits; Wait only after that.
			var tail string
			select {
			case tail = <-rest:
			case <-time.After(5 * time.Second):
				c.Process.Kill()
				c.Wait()
				t.Fatalf("plan still running 5s after %v in stage %s", tc.sig, tc.stage)
			}
			code := 0
			if err := c.Wait(); err != nil {
				ee, ok := err.(*exec.ExitError)
				if !ok {
					t.Fatal(err)
				}
				code = ee.ExitCode()
			}
			if code != 130 {
				t.Fatalf("%v in stage %s: exit %d, want 130; stderr after the signal:\n%s", tc.sig, tc.stage, code, tail)
			}
			if !strings.Contains(tail, "objgc: interrupted") {
				t.Errorf("stderr after the signal does not say it was interrupted:\n%s", tail)
			}
			t.Logf("%v in stage %s: exit 130 after %v", tc.sig, tc.stage, time.Since(sent).Round(time.Millisecond))
		})
	}
}
