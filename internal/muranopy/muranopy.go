// Package muranopy lets tests run Murano 14's own engine code beside
// objgc: Debian's python3-murano, which installs for Debian's interpreter
// only (not for whatever python3 comes first on PATH).
package muranopy

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Python is the interpreter python3-murano installs for.
const Python = "/usr/bin/python3"

// Require skips t when Python cannot run the import statement imports
// (such as "import murano.common.config, murano.engine.package_loader":
// murano.common.config must come before the engine's modules), saying
// what failed and how to install it. Under CI=true, where .ci/run installs
// python3-murano, it fails the test instead: a missing engine there is a
// broken machine, not a test to leave out.
func Require(t testing.TB, imports string) {
	t.Helper()
	out, err := exec.Command(Python, "-c", imports).CombinedOutput()
	if err == nil {
		return
	}
	last := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:]
	}
	if last == "" {
		last = err.Error()
	}
	msg := Python + " -c '" + imports + "': " + last + "; Murano's engine code is not installed: apt-get install -y python3-murano"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
