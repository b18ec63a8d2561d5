package applytest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/objgc/objgc/internal/modelgen"
)

// benchObjects is the number of doomed objects of BenchmarkApplyVsXargs.
const benchObjects = 10_000

// BenchmarkApplyVsXargs applies a plan of 10,000 doomed objects whose
// destroy hook is a no-op shell script, with --parallelism 8, and runs
// the same script 10,000 times with xargs -P 8 -n 1 in the same run.
// Metrics: apply-s and xargs-s (wall seconds per operation) and their
// ratio, apply/xargs (target <= 1.1). The difference is objgc's overhead
// per hook: journal records, stdin documents, process groups.
func BenchmarkApplyVsXargs(b *testing.B) {
	if _, err := exec.LookPath("xargs"); err != nil {
		b.Skip("no xargs")
	}
	dir := b.TempDir()
	modelPath, hook, idsPath, err := modelgen.WriteHookBench(dir, benchObjects)
	if err != nil {
		b.Fatal(err)
	}
	model, err := os.ReadFile(modelPath)
	if err != nil {
		b.Fatal(err)
	}
	environ := append(os.Environ(), "XDG_CONFIG_HOME="+dir, "OBJGC_CACHE_DIR="+filepath.Join(dir, "cache"))

	var applyTotal, xargsTotal time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if err := os.WriteFile(modelPath, model, 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()

		apply := exec.Command(objgcBin, "apply", "--hooks-dir", filepath.Join(dir, "hooks"), "--parallelism", "8", modelPath)
		apply.Dir, apply.Env = dir, environ
		start := time.Now()
		out, err := apply.CombinedOutput()
		applyTotal += time.Since(start)
		if err != nil || !strings.Contains(string(out), fmt.Sprintf("%d destroyed, 0 failed", benchObjects)) {
			b.Fatalf("objgc apply: %v\n%.2000s", err, out)
		}

		in, err := os.Open(idsPath)
		if err != nil {
			b.Fatal(err)
		}
		xargs := exec.Command("xargs", "-P", "8", "-n", "1", hook)
		xargs.Stdin = in
		start = time.Now()
		out, err = xargs.CombinedOutput()
		xargsTotal += time.Since(start)
		in.Close()
		if err != nil {
			b.Fatalf("xargs: %v\n%s", err, out)
		}
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(applyTotal.Seconds()/n, "apply-s")
	b.ReportMetric(xargsTotal.Seconds()/n, "xargs-s")
	b.ReportMetric(applyTotal.Seconds()/xargsTotal.Seconds(), "ratio")
}
