package cmd

import (
	"testing"
)

func TestParseCacheSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1024": 1024, "500MB": 500e6, "2GiB": 2 << 30, "1.5k": 1536, "10 kb": 10e3, "3b": 3} {
		if got, err := parseCacheSize(in); err != nil || got != want {
			t.Errorf("parseCacheSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "-1", "1XB"} {
		if _, err := parseCacheSize(in); err == nil {
			t.Errorf("parseCacheSize(%q) accepted", in)
		}
	}
}
