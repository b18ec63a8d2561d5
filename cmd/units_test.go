package cmd

import (
	"testing"
	"time"
)

// TestParseSize: every form docs/cache.md shows, SI for a letter and B,
// IEC for iB and for a letter alone, and what is not a size.
func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1024": 1024, "500MB": 500e6, "2GiB": 2 << 30, "1.5G": 3 << 29, "1.5k": 1536,
		"10 kb": 10e3, "3b": 3, "5GB": 5e9, "5gib": 5 << 30, " 7 ": 7, "1PiB": 1 << 50, "2TB": 2e12,
	} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "-1", "1XB", "1GiBB", "1e30", "1.5.5G", "GiB1"} {
		if n, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, n)
		}
	}
}

func TestParseDays(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30d": 30 * 24 * time.Hour, "1d12h": 36 * time.Hour, "720h": 720 * time.Hour, "90s": 90 * time.Second, "0": 0, "-1h": -time.Hour,
	} {
		if got, err := parseDays(in); err != nil || got != want {
			t.Errorf("parseDays(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "5", "soon", "1.5d", "30days", "9999999d"} {
		if d, err := parseDays(in); err == nil {
			t.Errorf("parseDays(%q) = %v, want an error", in, d)
		}
	}
}
