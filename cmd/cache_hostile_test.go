package cmd

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCacheVerifyEscapesNames: a name in the cache directory that holds
// terminal controls (anyone who can write there can make one) is shown
// quoted by cache verify, in text and JSON.
func TestCacheVerifyEscapesNames(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	// An empty cache, as cache add leaves it (list and verify never
	// create one).
	if err := os.MkdirAll(filepath.Join(cache, ".objgc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runObjgc(t, "cache", "list", "--cache-dir", cache); code != ExitOK {
		t.Fatalf("cache list: exit %d: %s", code, errOut)
	}
	evil := "evil\x1b]0;pwned\a\x1b[2J\r\u009b\u202ename"
	if err := os.WriteFile(filepath.Join(cache, evil), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runObjgc(t, "cache", "verify", "--cache-dir", cache)
	if code != ExitError {
		t.Fatalf("verify: exit %d\n%s%s", code, out, errOut)
	}
	want := strconv.Quote(filepath.Join(cache, evil)) + ": not a package's <FullName>/ directory"
	if !strings.Contains(out, want) {
		t.Errorf("verify text lacks %s:\n%s", want, out)
	}
	code, js, _ := runObjgc(t, "cache", "verify", "--cache-dir", cache, "--format", "json")
	if code != ExitError || !strings.Contains(js, `evil\u001b]0;pwned\u0007\u001b[2J\r\u009b\u202ename`) {
		t.Errorf("verify json: exit %d\n%s", code, js)
	}
	for _, s := range []string{out, errOut, js} {
		for i, r := range s {
			if r != '\n' && !strconv.IsPrint(r) {
				t.Fatalf("byte %d is %U:\n%q", i, r, s)
			}
		}
	}
}
