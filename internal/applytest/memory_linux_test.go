package applytest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/objgc/objgc/internal/modelgen"
)

// TestPlanMemoryBound: the built objgc plan --format json, run as a user
// runs it, peaks at most at 1.5 times its input's size plus 64 MiB in
// resident memory (docs/decisions.md, "A plan's memory"), on each hostile
// shape of modelgen and on 200,000 and 1,000,000 tiny doomed objects, the
// shape whose plan is largest for its input. The peak is the process's own
// VmHWM (planPeakRSS), the best of up to three runs: a busy machine can make
// the collector late once.
//
// Not parallel: a plan's peak depends on its collector keeping up, which
// other tests of this package on the same two cores would make it less
// able to.
func TestPlanMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and plans models of up to 44 MB")
	}
	dir := t.TempDir()
	type model struct {
		name string
		data func() []byte
	}
	var models []model
	for _, s := range modelgen.Shapes {
		if s == modelgen.TinyObjects {
			continue // the tiny models below
		}
		models = append(models, model{s.String() + " 60000", func() []byte { return modelgen.Hostile(s, 60_000) }})
	}
	for _, n := range []int{200_000, 1_000_000} {
		models = append(models, model{fmt.Sprintf("tiny %d", n), func() []byte {
			var b bytes.Buffer
			if err := modelgen.Tiny(&b, n); err != nil {
				t.Fatal(err)
			}
			return b.Bytes()
		}})
	}
	for k, m := range models {
		path := filepath.Join(dir, fmt.Sprintf("model%d.json", k))
		data := m.data()
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		size := int64(len(data))
		bound := size + size/2 + 64<<20
		var peaks []int64
		for range 3 {
			peak := planPeakRSS(t, path)
			peaks = append(peaks, peak)
			if peak <= bound {
				break
			}
		}
		best := slices.Min(peaks)
		t.Logf("%s: %.1f MB, peak RSS %.1f MiB (runs %v KiB), bound %.1f MiB", m.name, float64(size)/1e6, float64(best)/(1<<20), kib(peaks), float64(bound)/(1<<20))
		if best > bound {
			t.Errorf("%s (%d bytes): peak RSS %d bytes in the best of 3 runs, over the bound of %d (1.5x the file plus 64 MiB)", m.name, size, best, bound)
		}
		os.Remove(path)
	}
}

// planPeakRSS runs objgc plan --format json on path, its output thrown
// away, and returns its peak resident set in bytes: the VmHWM the plan
// says it reached when done (the OBJGC_TEST_STAGES hook). The kernel's
// count for a child (ru_maxrss) would not do: a child started from a
// vfork, as Go starts them, counts from its parent's peak, this test
// binary's (175 MiB under the race detector).
func planPeakRSS(t *testing.T, path string) int64 {
	t.Helper()
	cmd := exec.Command(objgcBin, "plan", "--format", "json", path)
	cmd.Env = append(os.Environ(), "OBJGC_CACHE_DIR="+t.TempDir(), "OBJGC_TEST_STAGES=1")
	cmd.Stdout = io.Discard
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("objgc plan %s: %v\n%s", path, err, stderr.String())
	}
	var kb int64
	for _, line := range strings.Split(stderr.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "objgc: stage done VmHWM "); ok {
			if _, err := fmt.Sscanf(v, "%d kB", &kb); err != nil {
				t.Fatalf("objgc plan %s: peak %q: %v", path, v, err)
			}
		}
	}
	if kb == 0 {
		t.Fatalf("objgc plan %s: no peak said:\n%s", path, stderr.String())
	}
	return kb << 10
}

func kib(bytes []int64) []int64 {
	out := make([]int64, len(bytes))
	for k, b := range bytes {
		out[k] = b >> 10
	}
	return out
}
