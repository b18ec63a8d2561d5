package peakrss

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// TestStatus: on Linux the peak is at least the current resident set,
// both grow when memory is touched, and Reset brings the peak down to
// about the current set once that memory is given back.
func TestStatus(t *testing.T) {
	if runtime.GOOS != "linux" {
		if Status("VmHWM") != 0 || Reset() {
			t.Fatal("Status or Reset worked off Linux")
		}
		t.Skip("no /proc/self/status")
	}
	if Status("NoSuchField") != 0 {
		t.Error("Status of a missing field is not 0")
	}
	debug.FreeOSMemory() // an earlier run's 64 MiB back to the system
	if !Reset() {
		t.Skip("cannot write /proc/self/clear_refs")
	}
	before := Status("VmHWM")
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = 1
	}
	grown := Status("VmHWM")
	if grown < before+32<<20 {
		t.Errorf("VmHWM went from %d to %d bytes after touching 64 MiB", before, grown)
	}
	rss := Status("VmRSS")
	if hwm := Status("VmHWM"); rss > hwm || rss < 32<<20 {
		t.Errorf("VmRSS %d bytes, then VmHWM %d", rss, hwm)
	}
	runtime.KeepAlive(buf)
	buf = nil
	debug.FreeOSMemory()
	Reset()
	if after := Status("VmHWM"); after > Status("VmRSS")+16<<20 {
		t.Errorf("after Reset VmHWM is %d bytes, VmRSS %d", after, Status("VmRSS"))
	}
}
