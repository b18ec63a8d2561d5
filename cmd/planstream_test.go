package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/objgc/objgc/destroy/planfile"
	"github.com/objgc/objgc/internal/modelgen"
	"github.com/objgc/objgc/internal/peakrss"
)

// TestStreamedPlanReadsBack checks the one JSON plan encoder
// (planfile.WriteJSON) against encoding/json: the plan printed and the plan
// saved with --out are the same bytes; ParsePlanFile reads them back; the
// plan read back, encoded whole by encoding/json (writeJSON) and by the
// encoder again (show --format json), gives those bytes again. Models:
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
			sp, err := planfile.Parse(out, saved)
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
			var shown bytes.Buffer
			if err := sp.WriteJSON(&shown); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(shown.Bytes(), saved) {
				t.Fatalf("the saved plan written again by the one encoder differs:\n%s\n---\n%s", saved, shown.Bytes())
			}
			again, err := planfile.Parse(out, whole.Bytes())
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

// BenchmarkPlanTiny200k runs objgc plan --format json, in the process, on
// a model of 200,000 tiny doomed objects (modelgen.Tiny: an 8.8 MB
// envelope, about 44 bytes an object): the shape whose plan is largest for
// its input. Metrics: plan-s/op, and peak-mem/input: the growth of the
// process's peak RSS (VmHWM) during one plan, divided by the model's size
// (the bound of docs/decisions.md, "A plan's memory": peak RSS at most
// 1.5x the file plus 64 MiB; the growth counts the model read and
// everything made from it).
func BenchmarkPlanTiny200k(b *testing.B) { benchmarkPlanTiny(b, 200_000) }

func benchmarkPlanTiny(b *testing.B, n int) {
	b.Setenv("OBJGC_CACHE_DIR", b.TempDir())
	model := filepath.Join(b.TempDir(), "model.json")
	f, err := os.Create(model)
	if err != nil {
		b.Fatal(err)
	}
	if err := modelgen.Tiny(f, n); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(model)
	if err != nil {
		b.Fatal(err)
	}
	input := float64(st.Size())
	b.SetBytes(st.Size())
	plan := func() {
		var out countingWriter
		var errb bytes.Buffer
		code := Run(context.Background(), BuildInfo{Version: "bench"}, []string{"plan", "--format", "json", model}, strings.NewReader(""), &out, &errb)
		if code != ExitOK || out.n < int64(n)*100 {
			b.Fatalf("plan: exit %d, %d bytes out: %s", code, out.n, errb.String())
		}
	}
	var elapsed time.Duration
	b.ResetTimer()
	for range b.N {
		// Each plan starts on a collected heap, as objgc plan starts.
		b.StopTimer()
		runtime.GC()
		b.StartTimer()
		t0 := time.Now()
		plan()
		elapsed += time.Since(t0)
	}
	b.StopTimer()
	b.ReportMetric(elapsed.Seconds()/float64(b.N), "plan-s/op")
	runtime.GC()
	debug.FreeOSMemory()
	if !peakrss.Reset() {
		b.Log("cannot reset the peak RSS (/proc/self/clear_refs): no memory metric")
		return
	}
	base := peakrss.Status("VmRSS")
	plan()
	peak := peakrss.Status("VmHWM")
	b.ReportMetric(float64(peak-base)/input, "peak-mem/input")
	b.ReportMetric(input/(1<<20), "input-MiB")
}

// countingWriter counts and drops what is written.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }
