// Package golden compares test output with golden files, and rewrites
// them under the one -update flag of every objgc test binary that
// imports it, logging a unified diff of what changed so that a rewrite
// is reviewed, not taken on trust.
//
// go test hides the log of a passing package: run -update with -v to see
// the diffs (git diff shows them too, afterwards).
package golden

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/diff"
)

var update = flag.Bool("update", false, "rewrite the golden files (and the scripts' expected output) and log what changed; add -v to see it")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Check compares got with the golden file at path (relative to the
// package's folder, as go test runs it). Without -update a difference is
// an error showing the unified diff from the file to got, and a missing
// file fails the test. With -update the file is written (with its parent
// folders) when it differs, and the diff is logged.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(path)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		t.Fatal(err)
	}
	if *update {
		if !missing && bytes.Equal(want, got) {
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		logChange(t, path, want, got, missing)
		return
	}
	if missing {
		t.Fatalf("%v (%s creates it)", err, hint(t))
	}
	if !bytes.Equal(want, got) {
		t.Errorf("the output differs from %s (%s rewrites it):\n%s", path, hint(t), diff.Diff(path, want, "got", got))
	}
}

// Watch, under -update, reads the files now and logs, when t and its
// subtests are done, a unified diff of each that changed meanwhile. It is
// for files that something else rewrites, as testscript does with a
// script's expected output under its UpdateScripts parameter. Without
// -update it does nothing.
func Watch(t testing.TB, paths ...string) {
	t.Helper()
	if !*update {
		return
	}
	before := make(map[string][]byte, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		before[p] = data
	}
	t.Cleanup(func() {
		for _, p := range paths {
			now, err := os.ReadFile(p)
			if err != nil {
				t.Error(err)
				continue
			}
			if !bytes.Equal(before[p], now) {
				logChange(t, p, before[p], now, false)
			}
		}
	})
}

func logChange(t testing.TB, path string, old, now []byte, created bool) {
	t.Helper()
	if created {
		t.Logf("created %s:\n%s", path, diff.Diff("/dev/null", nil, path, now))
		return
	}
	t.Logf("rewrote %s:\n%s", path, diff.Diff(path+" (before)", old, path+" (after)", now))
}

// hint names the command that rewrites the golden files of t's top-level
// test, run in the package's folder.
func hint(t testing.TB) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	return "go test -run '^" + name + "$' -update -v"
}
