package enginetest

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestInUseNamesTheEngine: a package a deployment of the engine holds is
// skipped by prune and rm, which name the engine's process as the holder
// of its usage lock (its pid, from the lock, and its name, from
// /proc/PID/comm), in text and JSON.
func TestInUseNamesTheEngine(t *testing.T) {
	t.Parallel()
	v := startTwoVersions(t)
	e, cache := v.engine, v.cache

	held := fmt.Sprintf(", held by pid %d (python3)", e.lines.Pid)
	code, out, errOut := objgc(t, nil, "cache", "prune", "--cache-dir", cache, "--outdated", "--keep", "1")
	want := regexp.MustCompile(`(?m)^skipped com\.example\.things 1\.0\.0 ` + id1[:12] + `: in use \(older version \(keeping 1\)\)` + regexp.QuoteMeta(held) + `$`)
	if code != 3 || !want.MatchString(out) {
		t.Fatalf("prune while the engine uses 1.0.0: exit %d\n%s%s\nwant a line matching %s", code, out, errOut, want)
	}
	code, out, errOut = objgc(t, nil, "cache", "prune", "--cache-dir", cache, "--outdated", "--keep", "1", "--format", "json")
	if code != 3 || !strings.Contains(out, fmt.Sprintf("\"held_by\": {\n        \"pid\": %d,\n        \"command\": \"python3\"\n      }", e.lines.Pid)) {
		t.Fatalf("prune --format json: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = objgc(t, nil, "cache", "rm", "--cache-dir", cache, id1)
	if code != 3 || !strings.Contains(out, ": in use"+held+"\n") {
		t.Fatalf("rm of the package in use: exit %d\n%s%s", code, out, errOut)
	}
	e.end("d1")
}
