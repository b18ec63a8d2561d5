//go:build unix

package hook

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time (user + system) objgc's own process has used so
// far, all threads, not counting its children.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRunNoop runs the no-op hook of the apply benchmark
// (docs/performance.md) with a stdin document, as objgc apply does, and
// reports the CPU time Run costs objgc's own process per hook (cpu-us/op),
// which leaves out the hook's own.
func BenchmarkRunNoop(b *testing.B) {
	hook := writeHook(&testing.T{}, b.TempDir(), "bench.Obj/destroy", "exit 0\n")
	doc := []byte(`{"event":"destroy","object":{"?":{"id":"bench-obj-000001","type":"bench.Obj/1.0.0@bench"},"name":"object 1"},"owner_id":"bench-env"}`)
	inv := Invocation{Hook: hook, ObjectID: "bench-obj-000001", ObjectType: "bench.Obj/1.0.0@bench",
		Class: "bench.Obj", Doomed: "/tmp/doomed", Stdin: doc, Env: os.Environ(),
		Stderr: func(string) {}}
	cpu := cpuTime(b)
	b.ResetTimer()
	for range b.N {
		if _, err := Run(context.Background(), inv); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-us/op")
}

// BenchmarkStartProcessFloor is the floor of BenchmarkRunNoop: the same
// hook started with os.StartProcess, inheriting nothing, and waited for.
func BenchmarkStartProcessFloor(b *testing.B) {
	hook := writeHook(&testing.T{}, b.TempDir(), "bench.Obj/destroy", "exit 0\n")
	env := os.Environ()
	cpu := cpuTime(b)
	b.ResetTimer()
	for range b.N {
		p, err := os.StartProcess(hook, []string{hook, "destroy", "x"}, &os.ProcAttr{Env: env})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-us/op")
}
