// Package enginetest runs murano-engine's own package-cache code next to
// objgc on one cache directory: Murano 14's ApiPackageLoader (Debian's
// python3-murano) in a real Python process (testdata/engine.py), with
// only its API client replaced by a stand-in that serves zip files, and
// the real objgc binary. The tests skip when /usr/bin/python3 cannot
// import murano, printing the command that installs it, except under
// CI=true, where they fail. It has no non-test code.
package enginetest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/objgc/objgc/internal/testbin"

	"github.com/objgc/objgc/internal/muranopy"
)

// objgcBin is the objgc binary TestMain built.
var objgcBin string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	var remove func()
	var err error
	objgcBin, remove, err = testbin.Build("objgc-enginetest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer remove()
	return m.Run()
}

const python3 = muranopy.Python

// requireMurano skips (under CI=true: fails) the test when Murano's
// engine code is not installed.
func requireMurano(t *testing.T) {
	muranopy.Require(t, "import murano.common.config, murano.engine.package_loader")
}

// waitLimit bounds every wait for the engine or a file: past it the test
// has hung. No assertion depends on how long anything took.
const waitLimit = 2 * time.Minute

// engine is a running testdata/engine.py.
type engine struct {
	t     *testing.T
	lines *testbin.Lines
}

// startEngine starts the engine on cache ("-": the engine's default
// directory) with extra environment variables env.
func startEngine(t *testing.T, cache string, env ...string) *engine {
	t.Helper()
	requireMurano(t)
	cmd := exec.Command(python3, filepath.Join("testdata", "engine.py"), cache)
	cmd.Env = append(os.Environ(), env...)
	return &engine{t: t, lines: testbin.StartLines(t, cmd, "engine", waitLimit)}
}

// do sends one command and returns the engine's answer.
func (e *engine) do(command string) string {
	e.t.Helper()
	return e.lines.Do(command)
}

// load has deployment load package id of fullName and version, served as
// archive ("-": the catalog must not be asked), and returns its
// directory.
func (e *engine) load(deployment, fullName, version, id, archive string) string {
	e.t.Helper()
	a := e.do(strings.Join([]string{"load", deployment, fullName, version, id, archive}, " "))
	dir, ok := strings.CutPrefix(a, "loaded ")
	if !ok {
		e.t.Fatalf("engine: %s loading %s %s %s: %s", deployment, fullName, version, id, a)
	}
	return dir
}

// end ends deployment, releasing its usage locks.
func (e *engine) end(deployment string) {
	e.t.Helper()
	if a := e.do("end " + deployment); a != "ended" {
		e.t.Fatalf("engine: end %s: %s", deployment, a)
	}
}

// pkg is a Murano package: its files by path.
type pkg map[string]string

// thingsPackage is com.example.things at version: com.example.Thing,
// which extends com.example.Base.
func thingsPackage(version string) pkg {
	return pkg{
		"manifest.yaml": "Format: 1.4\nType: Application\nFullName: com.example.things\nVersion: " + version + "\n" +
			"Classes:\n  com.example.Thing: Thing.yaml\n  com.example.Base: Base.yaml\n",
		"Classes/Thing.yaml": "Namespaces:\n  =: com.example\nName: Thing\nExtends: Base\n",
		"Classes/Base.yaml":  "Namespaces:\n  =: com.example\nName: Base\n",
	}
}

// zipPackage writes p as a zip archive in dir, as the catalog serves
// packages (manifest.yaml at the root), files under hooks/ executable
// (mode 0755 in the archive), and returns its path.
func zipPackage(t *testing.T, dir, name string, p pkg) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(p))
	for n := range p {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		h := &zip.FileHeader{Name: n, Method: zip.Deflate}
		h.SetMode(0o644)
		if strings.HasPrefix(n, "hooks/") {
			h.SetMode(0o755)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, p[n])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// objgc runs the objgc binary with args and extra environment variables
// env, and returns its exit status and output.
func objgc(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(objgcBin, args...)
	cmd.Env = append(os.Environ(), append([]string{"NO_COLOR=1"}, env...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("objgc %s: %v", strings.Join(args, " "), err)
		}
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// waitFile waits until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !exists(path) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
