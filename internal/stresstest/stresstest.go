// Package stresstest reads the switches of objgc's stress tests
// (docs/testing.md), for the tests of every package that has some.
package stresstest

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// Mode reads the stress switches: OBJGC_STRESS=1 runs the long, randomly
// timed versions of the tests; OBJGC_STRESS_SEED=N sets their seed
// (default: the clock in stress mode, 1 otherwise). The seed is logged so
// that a failing run can be repeated; a seed that is not a number fails
// the test.
func Mode(t testing.TB) (stress bool, seed uint64) {
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
