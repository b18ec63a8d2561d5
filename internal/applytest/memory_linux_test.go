package applytest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/objgc/objgc/internal/modelgen"
	"github.com/objgc/objgc/internal/peakrss"
)

// TestPlanMemoryBound: the built objgc plan --format json, run as a user
// runs it, peaks at most at 1.5 times its input's size plus 64 MiB in
// resident memory (docs/decisions.md, "A plan's memory"), on each hostile
// shape of modelgen and on 200,000 and 1,000,000 tiny doomed objects, the
// shape whose plan is largest for its input. The peak is the kernel's
// count for the process (planPeakRSS), the best of up to three runs: a
// busy machine can make the collector late once.
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
// away, and returns its peak resident set in bytes, measured from outside:
// the kernel's count for the process (ru_maxrss).
//
// The plan is started by a small parent (this test binary run again as
// peakParent), not by the test itself: Go starts a child from a vfork,
// whose ru_maxrss starts from its parent's peak, which for this test
// binary can be larger than the plan's (it held the model, and is 175 MiB
// under the race detector). The small parent says its own peak too, and a
// plan's count that does not exceed it says nothing of the plan: the test
// fails then rather than pass on the parent's figure.
func planPeakRSS(t *testing.T, path string) int64 {
	t.Helper()
	peak, exact, _ := planPeakRSSExit(t, path, 0)
	if !exact {
		t.Fatalf("objgc plan %s: peak %d KiB, not above its parent's: the kernel's count is its parent's, not the plan's", path, peak>>10)
	}
	return peak
}

// planPeakRSSExit is planPeakRSS for a plan that exits with status want,
// whose standard error it returns too. exact is false when the kernel's
// count does not exceed the parent's: the plan's peak is then at most
// the figure returned, not that figure.
func planPeakRSSExit(t *testing.T, path string, want int) (peak int64, exact bool, stderrText string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], objgcBin, "plan", "--format", "json", path)
	cmd.Env = append(os.Environ(), "OBJGC_CACHE_DIR="+t.TempDir(), peakParentEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != want {
		t.Fatalf("objgc plan %s: %v, want exit status %d\n%s", path, err, want, stderr.String())
	}
	var child, parent int64
	if _, err := fmt.Sscanf(stdout.String(), "%d %d", &child, &parent); err != nil {
		t.Fatalf("objgc plan %s: peak %q: %v\n%s", path, stdout.String(), err, stderr.String())
	}
	return max(child, parent) << 10, child > parent, stderr.String()
}

// peakParentEnv set to 1 makes this test binary peakParent instead of
// running tests.
const peakParentEnv = "OBJGC_TEST_PEAK_PARENT"

// peakParent runs the command in os.Args[1:] with its standard output
// thrown away and its standard error passed on, and writes on standard
// output the command's ru_maxrss and its own peak resident set (VmHWM),
// in KiB, whatever the command's exit status. It returns the command's
// exit status; false when the test binary is not to be peakParent.
func peakParent() (code int, ok bool) {
	if os.Getenv(peakParentEnv) != "1" {
		return 0, false
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		if _, exited := err.(*exec.ExitError); !exited {
			fmt.Fprintln(os.Stderr, err)
			return 1, true
		}
	}
	// Read after the run: the peak so far is at least the one the child
	// started from.
	fmt.Println(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss, peakrss.Status("VmHWM")>>10)
	return cmd.ProcessState.ExitCode(), true
}

// TestRefusedModelMemoryBound: a model refused for a key written twice
// stays within the same bound as any plan, however many times the key
// is written: the duplicate is found when it is read, not when its
// object closes. The second model has a million distinct keys before
// its duplicate, the most an object can make the check keep.
func TestRefusedModelMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and plans models of up to 14 MB")
	}
	dir := t.TempDir()
	const n = 1_000_000
	repeated := func(b *bytes.Buffer) {
		for k := range n {
			if k > 0 {
				b.WriteString(", ")
			}
			b.WriteString(`"k": 1`)
		}
	}
	distinct := func(b *bytes.Buffer) {
		for k := range n {
			fmt.Fprintf(b, `"k%07d": 1, `, k)
		}
		b.WriteString(`"k0000000": 2`)
	}
	for _, m := range []struct {
		name    string
		members func(*bytes.Buffer)
		key     string
	}{
		{"one key a million times", repeated, "k"},
		{"a million keys, then one again", distinct, "k0000000"},
	} {
		var b bytes.Buffer
		b.WriteString(`{"Objects": {"?": {"id": "e1", "type": "io.murano.Environment"}, "x": {`)
		m.members(&b)
		b.WriteString("}}}\n")
		path := filepath.Join(dir, "model.json")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		size := int64(b.Len())
		bound := size + size/2 + 64<<20
		// An upper bound is all this needs: a plan that peaks below its
		// small parent is within the bound too.
		peak, _, stderr := planPeakRSSExit(t, path, 1)
		if want := fmt.Sprintf("$.Objects.x.%s: duplicate key %q", m.key, m.key); !bytes.Contains([]byte(stderr), []byte(want)) {
			t.Fatalf("%s: objgc plan said %q, want the duplicate key %s", m.name, stderr, want)
		}
		t.Logf("%s: %.1f MB, peak RSS %.1f MiB, bound %.1f MiB", m.name, float64(size)/1e6, float64(peak)/(1<<20), float64(bound)/(1<<20))
		if peak > bound {
			t.Errorf("%s (%d bytes): peak RSS %d bytes, over the bound of %d (1.5x the file plus 64 MiB)", m.name, size, peak, bound)
		}
	}
}

func kib(bytes []int64) []int64 {
	out := make([]int64, len(bytes))
	for k, b := range bytes {
		out[k] = b >> 10
	}
	return out
}
