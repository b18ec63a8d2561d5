package pkgcache

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestPlanPrune: the selection alone, on listings built in memory (no
// file system): which packages each policy selects, in which order, for
// which reason, and how in-use packages count.
func TestPlanPrune(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	// pkg builds an entry; id is a short tag (not a real sha256: the plan
	// never checks it), installed and lastUse are days before now.
	pkg := func(name, version, id string, size int64, installed, lastUse int, inUse bool) Entry {
		e := Entry{FullName: name, Version: version, ID: id, Size: size, InUse: inUse,
			Installed: now.Add(-time.Duration(installed) * day)}
		if lastUse >= 0 {
			e.LastUse = now.Add(-time.Duration(lastUse) * day)
		}
		return e
	}
	a1 := pkg("a", "1.0.0", "a1", 10, 30, -1, false)
	a2 := pkg("a", "2.0.0", "a2", 20, 20, 1, false)
	a10 := pkg("a", "10.0.0", "a10", 30, 10, -1, false) // newest: semantic, not string, order
	b1old := pkg("b", "1.0.0", "b1old", 5, 9, -1, false)
	b1new := pkg("b", "1.0.0", "b1new", 6, 8, -1, false) // re-uploaded: the later install wins
	c1 := pkg("c", "1.0.0", "c1", 100, 40, 35, true)
	all := []Entry{c1, a10, b1new, a1, b1old, a2} // planPrune sorts

	type sel struct{ id, reason string }
	for _, tc := range []struct {
		name   string
		policy prunePolicy
		want   []sel
	}{
		{"outdated keep 1", prunePolicy{Outdated: true},
			[]sel{{"a1", "older version (keeping 1)"}, {"a2", "older version (keeping 1)"}, {"b1old", "outdated id"}}},
		{"outdated keep 2", prunePolicy{Outdated: true, Keep: 2},
			[]sel{{"a1", "older version (keeping 2)"}, {"b1old", "outdated id"}}},
		{"unused 15 days", prunePolicy{UnusedFor: 15 * day},
			// a2 was installed 20 days ago but used yesterday; c1 is in
			// use but selected all the same (execution skips it).
			[]sel{{"a1", "unused for 30 days"}, {"c1", "unused for 35 days"}}},
		{"outdated then unused", prunePolicy{Outdated: true, UnusedFor: 15 * day},
			[]sel{{"a1", "older version (keeping 1)"}, {"a2", "older version (keeping 1)"}, {"b1old", "outdated id"}, {"c1", "unused for 35 days"}}},
		{"max size, LRU first", prunePolicy{LimitSize: true, MaxSize: 141},
			// 171 bytes, c1 (100, in use) included. Least recently used
			// (last use or install, if later): a1 30 days, a10 10, b1old
			// 9, b1new 8, a2 1. a1 leaves 161 > 141, a10 leaves 131.
			[]sel{{"a1", "cache over max size"}, {"a10", "cache over max size"}}},
		{"max size met without selecting", prunePolicy{LimitSize: true, MaxSize: 171}, nil},
		{"max size below what is in use", prunePolicy{LimitSize: true, MaxSize: 50},
			[]sel{{"a1", "cache over max size"}, {"a10", "cache over max size"}, {"b1old", "cache over max size"},
				{"b1new", "cache over max size"}, {"a2", "cache over max size"}, {"c1", "cache over max size"}}},
		{"outdated freed space counts for max size", prunePolicy{Outdated: true, LimitSize: true, MaxSize: 136},
			// outdated takes a1, a2, b1old (35 bytes): 136 left, met.
			[]sel{{"a1", "older version (keeping 1)"}, {"a2", "older version (keeping 1)"}, {"b1old", "outdated id"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := planPrune(all, tc.policy, now)
			var got []sel
			for _, r := range plan.selected {
				got = append(got, sel{r.ID, r.Reason})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("selected %v\nwant     %v", got, tc.want)
			}
		})
	}

	// The input is not reordered, and the dry-run split puts in-use
	// packages apart and counts only the others' bytes.
	in := append([]Entry(nil), all...)
	plan := planPrune(in, prunePolicy{UnusedFor: 15 * day}, now)
	if !reflect.DeepEqual(in, all) {
		t.Error("planPrune reordered its input")
	}
	removed, inUse, freed := plan.split()
	if len(removed) != 1 || removed[0].ID != "a1" || len(inUse) != 1 || inUse[0].ID != "c1" || freed != 10 {
		t.Errorf("split: removed %v, in use %v, freed %d", ids(removed), ids(inUse), freed)
	}
}

func ids(rs []Removal) string {
	var s []string
	for _, r := range rs {
		s = append(s, fmt.Sprintf("%s(%s)", r.ID, r.Reason))
	}
	return strings.Join(s, " ")
}

// TestAgeText: the age in prune's "unused for" reason, the package's own
// time since last use in words, never the policy's threshold.
func TestAgeText(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{41*day + 7*time.Hour, "41 days"},
		{10 * day, "10 days"},
		{9*day + 23*time.Hour + 59*time.Minute, "9 days 23 hours"},
		{2 * day, "2 days"},
		{day + time.Hour, "1 day 1 hour"},
		{day - time.Second, "23 hours 59 minutes"},
		{90 * time.Minute, "1 hour 30 minutes"},
		{2 * time.Hour, "2 hours"},
		{61 * time.Second, "1 minute 1 second"},
		{45 * time.Second, "45 seconds"},
		{time.Second, "1 second"},
		{300 * time.Millisecond, "0 seconds"},
		{-time.Hour, "0 seconds"}, // a clock set back: never a negative age
	} {
		if got := ageText(tc.d); got != tc.want {
			t.Errorf("ageText(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
