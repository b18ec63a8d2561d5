package pkgcache

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// stressMode reads the stress switches of the multi-process tests
// (docs/testing.md): OBJGC_STRESS=1 runs the long, randomly timed
// versions; OBJGC_STRESS_SEED=N sets their seed (default: the clock in
// stress mode, 1 otherwise). The seed is logged so that a failing run can
// be repeated.
func stressMode(t *testing.T) (stress bool, seed uint64) {
	t.Helper()
	stress = os.Getenv("OBJGC_STRESS") == "1"
	seed = 1
	if stress {
		seed = uint64(time.Now().UnixNano())
	}
	if s := os.Getenv("OBJGC_STRESS_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("OBJGC_STRESS_SEED=%q: want a number", s)
		}
		seed = n
	}
	t.Logf("stress %v, seed %d (repeat with OBJGC_STRESS=%d OBJGC_STRESS_SEED=%d)", stress, seed, map[bool]int{false: 0, true: 1}[stress], seed)
	return stress, seed
}
