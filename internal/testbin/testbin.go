// Package testbin gives tests their real processes: the objgc binary,
// built once for the test packages that drive it (internal/applytest,
// internal/enginetest); the test binary itself started again as a helper
// (StartSelf); and a line-by-line conversation with a helper (Lines).
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Root is the module's root directory, found from this file's place in it.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Build builds objgc into a new temporary directory named after prefix and
// returns the binary's path and a function that removes the directory.
// The build drops -race from GOFLAGS: these tests measure objgc's own
// timing, signals and memory, not the race detector's. The error holds the
// compiler's output.
func Build(prefix string) (bin string, remove func(), err error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	remove = func() { os.RemoveAll(dir) }
	bin = filepath.Join(dir, "objgc")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = Root()
	build.Env = withoutRace(os.Environ())
	if out, err := build.CombinedOutput(); err != nil {
		remove()
		return "", nil, fmt.Errorf("building objgc: %v\n%s", err, out)
	}
	return bin, remove, nil
}

// withoutRace drops -race from GOFLAGS in env.
func withoutRace(env []string) []string {
	out := make([]string, 0, len(env))
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "GOFLAGS="); ok {
			e = "GOFLAGS=" + strings.Join(slices.DeleteFunc(strings.Fields(v), func(f string) bool {
				return f == "-race" || f == "--race" || f == "-race=true"
			}), " ")
		}
		out = append(out, e)
	}
	return out
}
