package destroy

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/internal/modelgen"
	"github.com/objgc/objgc/internal/peakrss"
	"github.com/objgc/objgc/internal/plantest"
	"github.com/objgc/objgc/snapshot"
)

// planBytes is what objgc plan --snapshot --graph does before printing:
// both trees read in parallel, compared and ordered.
func planBytes(b *testing.B, snapData, incomingData []byte) *order.Plan {
	var snap, in *snapshot.Tree
	var errS, errI error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		snap, errS = snapshot.LoadSnapshot(snapshot.NewDocument("snapshot.json", snapData))
	}()
	go func() {
		defer wg.Done()
		in, errI = snapshot.LoadGraph(snapshot.NewDocument("incoming.json", incomingData))
	}()
	wg.Wait()
	if errS != nil || errI != nil {
		b.Fatal(errS, errI)
	}
	return order.NewPlan(plantest.Compare(snap, in))
}

// BenchmarkPlanMillion plans a 1,000,000-object snapshot against an
// incoming model with a tenth of the applications removed, and times
// gjson.ValidBytes over the same two inputs in the same run. Metrics:
// plan-s and valid-s per operation, their ratio (target <= 2), and
// peak-mem/input: the growth of the process's peak RSS while planning from
// the files, divided by the inputs' size (target <= 2).
func BenchmarkPlanMillion(b *testing.B) { benchmarkPlan(b, 1_000_000) }

// BenchmarkPlan100k is the same on 100,000 objects.
func BenchmarkPlan100k(b *testing.B) { benchmarkPlan(b, 100_000) }

func benchmarkPlan(b *testing.B, n int) {
	snapPath, incomingPath, err := modelgen.BenchPair(n)
	if err != nil {
		b.Fatal(err)
	}
	snapData, err := os.ReadFile(snapPath)
	if err != nil {
		b.Fatal(err)
	}
	incomingData, err := os.ReadFile(incomingPath)
	if err != nil {
		b.Fatal(err)
	}
	input := float64(len(snapData) + len(incomingData))
	b.SetBytes(int64(input))
	var planTime, validTime time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Start each plan on a collected heap, as objgc plan starts: the
		// garbage of the previous iteration is not this one's cost.
		b.StopTimer()
		runtime.GC()
		b.StartTimer()
		t0 := time.Now()
		if !gjson.ValidBytes(snapData) || !gjson.ValidBytes(incomingData) {
			b.Fatal("generated model is not valid JSON")
		}
		validTime += time.Since(t0)
		t0 = time.Now()
		p := planBytes(b, snapData, incomingData)
		planTime += time.Since(t0)
		if len(p.Objects) == 0 {
			b.Fatal("nothing to destroy")
		}
	}
	b.StopTimer()
	b.ReportMetric(planTime.Seconds()/float64(b.N), "plan-s/op")
	b.ReportMetric(validTime.Seconds()/float64(b.N), "valid-s/op")
	b.ReportMetric(float64(planTime)/float64(validTime), "plan/valid")

	// Peak memory: drop the benchmark's own copies, then plan from the
	// files as objgc plan does and read the peak RSS (VmHWM) growth.
	snapData, incomingData = nil, nil
	runtime.GC()
	debug.FreeOSMemory()
	if !peakrss.Reset() {
		b.Log("cannot reset the peak RSS (/proc/self/clear_refs): no memory metric")
		return
	}
	base := peakrss.Status("VmRSS")
	sd, err := snapshot.ReadDocument(snapPath, nil)
	if err != nil {
		b.Fatal(err)
	}
	gd, err := snapshot.ReadDocument(incomingPath, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := planBytes(b, sd.Data, gd.Data)
	peak := peakrss.Status("VmHWM")
	runtime.KeepAlive(p)
	b.ReportMetric(float64(peak-base)/input, "peak-mem/input")
	b.ReportMetric(input/(1<<20), "input-MiB")
}

// BenchmarkNewPlanTiny200k orders the model of 200,000 tiny doomed
// objects (modelgen.Tiny, 8.4 MiB): the shape whose plan is largest for
// its input. Metrics: kept-B/doomed, the heap the Plan keeps once made
// (live heap after NewPlan minus before, after a collection each) per
// doomed object, and alloc-B/doomed, all it allocated on the way
// (transient ordering graph included). Per-object plan data must stay
// compact, so that a plan's memory stays near its input's: strings, a path
// and a reasons slice per object would cost hundreds of bytes an object.
func BenchmarkNewPlanTiny200k(b *testing.B) {
	const n = 200_000
	var buf bytes.Buffer
	if err := modelgen.Tiny(&buf, n); err != nil {
		b.Fatal(err)
	}
	snap, in, err := snapshot.LoadModel(snapshot.NewDocument("model.json", buf.Bytes()))
	if err != nil {
		b.Fatal(err)
	}
	d := plantest.Compare(snap, in)
	if len(d.Doomed) != n {
		b.Fatalf("%d doomed, want %d", len(d.Doomed), n)
	}
	var kept, alloc float64
	var before, after runtime.MemStats
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		p := order.NewPlan(d)
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		if len(p.Objects) != n {
			b.Fatalf("%d objects planned, want %d", len(p.Objects), n)
		}
		runtime.KeepAlive(p)
		kept += float64(after.HeapAlloc) - float64(before.HeapAlloc)
		alloc += float64(after.TotalAlloc - before.TotalAlloc)
		b.StartTimer()
	}
	b.ReportMetric(kept/float64(b.N)/n, "kept-B/doomed")
	b.ReportMetric(alloc/float64(b.N)/n, "alloc-B/doomed")
}

// BenchmarkReasonsSubscribersCycle finds again the reasons and successors
// of every object of modelgen's Subscribers shape (one doomed publisher
// with 60,000 doomed subscribers, in one cycle), as the plan writers and
// apply do. Each object's reasons must cost time linear in its records:
// checking each of 60,000 subscribers against a list of the 60,000 edges
// ignored in the cycle is quadratic.
func BenchmarkReasonsSubscribersCycle(b *testing.B) {
	snap, in, err := snapshot.LoadModel(snapshot.NewDocument("subscribers.json", modelgen.Hostile(modelgen.Subscribers, 60_000)))
	if err != nil {
		b.Fatal(err)
	}
	p := order.NewPlan(plantest.Compare(snap, in))
	if len(p.Cycles) != 1 || len(p.Cycles[0]) != 60_001 {
		b.Fatalf("cycles: %d, want one of 60,001 objects", len(p.Cycles))
	}
	b.ResetTimer()
	for range b.N {
		cycle := 0
		for i := range p.Objects {
			for _, r := range p.Reasons(i) {
				if r.Code == order.ReasonCycle {
					cycle++
				}
			}
			p.Successors(i)
		}
		if cycle != 120_000 {
			b.Fatalf("%d reasons ignored in the cycle, want 120,000", cycle)
		}
	}
}
