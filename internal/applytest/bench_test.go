package applytest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchObjects is the number of doomed objects of BenchmarkApplyVsXargs.
const benchObjects = 10_000

// flatModel returns an envelope whose snapshot holds n objects of class
// bench.Obj under the environment and whose incoming model holds none of
// them: one group of n doomed objects, no notifications. It also returns
// the ids, one a line.
func flatModel(n int) (model, ids []byte) {
	var m, l bytes.Buffer
	m.WriteString(`{"Objects": {"?": {"id": "bench-env", "type": "bench.Env"}, "services": []},` + "\n")
	m.WriteString(`"ObjectsCopy": {"?": {"id": "bench-env", "type": "bench.Env"}, "services": [` + "\n")
	for i := range n {
		if i > 0 {
			m.WriteString(",\n")
		}
		id := fmt.Sprintf("bench-obj-%06d", i)
		fmt.Fprintf(&m, `  {"?": {"id": %q, "type": "bench.Obj/1.0.0@bench"}, "name": "object %d"}`, id, i)
		l.WriteString(id + "\n")
	}
	m.WriteString("\n]},\n\"Attributes\": []}\n")
	return m.Bytes(), l.Bytes()
}

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
	model, ids := flatModel(benchObjects)
	hook := filepath.Join(dir, "hooks", "bench.Obj", "destroy")
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	idsPath := filepath.Join(dir, "ids.txt")
	if err := os.WriteFile(idsPath, ids, 0o644); err != nil {
		b.Fatal(err)
	}
	modelPath := filepath.Join(dir, "m.json")
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
