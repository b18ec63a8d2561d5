package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func sumOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestRunChecksSHA256: a hook whose content is the planned one runs; one
// edited in place or replaced by a rename since does not, and fails with
// ErrChanged; a Sums that hashed the old file sees the new one.
func TestRunChecksSHA256(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	hook := writeHook(t, dir, "io.murano.Object/destroy", "touch '"+marker+"'\n")
	planned := sumOf(t, hook)
	// Sums remembers the file at once: the changes below are of
	// another size, which it sees whatever the clock.
	defer func(d time.Duration) { sumsSettle = d }(sumsSettle)
	sumsSettle = 0
	var sums Sums
	if _, err := run(t, Invocation{Hook: hook, SHA256: planned, Sums: &sums}, ""); err != nil {
		t.Fatalf("planned content: %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the hook did not run: %v", err)
	}
	os.Remove(marker)
	if len(sums.m) != 1 {
		t.Fatalf("Sums remembers %d files, want 1", len(sums.m))
	}

	for _, how := range []string{"in place", "renamed over"} {
		evil := "touch '" + marker + "'; echo evil\n" // another size too
		if how == "in place" {
			writeHook(t, dir, "io.murano.Object/destroy", evil)
		} else {
			other := writeHook(t, dir, "other", evil)
			if err := os.Rename(other, hook); err != nil {
				t.Fatal(err)
			}
		}
		_, err := run(t, Invocation{Hook: hook, SHA256: planned, Sums: &sums}, "")
		var he *HookError
		if !errors.As(err, &he) || !errors.Is(err, ErrChanged) {
			t.Fatalf("%s: err = %v, want a *HookError wrapping ErrChanged", how, err)
		}
		want := "hook " + hook + " destroy of abc: changed since it was planned (sha256 " + planned[:12] + ", now " + sumOf(t, hook)[:12] + "); not run: plan again"
		if err.Error() != want {
			t.Errorf("%s: err = %q, want %q", how, err, want)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%s: the changed hook ran", how)
		}
		writeHook(t, dir, "io.murano.Object/destroy", "touch '"+marker+"'\n")
	}
}
