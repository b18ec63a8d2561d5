package cmd_test

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/objgc/objgc/cmd"
)

// junitDoc is what the test reads back of a --junit file.
type junitDoc struct {
	Suites []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// validateJUnit checks path against cmd/testdata/junit.xsd with xmllint.
// Without xmllint the test is skipped, except on CI (CI=true), where
// .ci/run installs it: there a missing xmllint fails.
func validateJUnit(t *testing.T, path string) {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("xmllint not found; CI must have it (apt-get install libxml2-utils, see .ci/run)")
		}
		t.Skip("xmllint not found (apt-get install libxml2-utils)")
	}
	out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), path).CombinedOutput()
	if err != nil {
		t.Fatalf("%s does not validate against the JUnit schema: %v\n%s", path, err, out)
	}
}

func writeExec(t *testing.T, path, script string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestJUnitReport: one test case a doomed object; a failed hook is a
// failure with its exit status and stderr tail (control characters and
// XML syntax in it included), the object it blocks a skipped case naming
// it, a failed notification a failure of the notifications suite; the
// file validates against the JUnit schema Jenkins and GitLab read.
func TestJUnitReport(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	hooks := filepath.Join(dir, "hooks")
	writeExec(t, filepath.Join(hooks, "t.VM", "destroy"),
		"#!/bin/sh\nprintf 'quota <exceeded> & \"gone\"\\n\\033[31mred\\001\\000nul\\n\\357\\277\\276 last\\n' >&2\nexit 3\n")
	writeExec(t, filepath.Join(hooks, "t.Ok", "destroy"), "#!/bin/sh\nexit 0\n")
	writeExec(t, filepath.Join(hooks, "t.Env", "notify", "onGone"), "#!/bin/sh\necho 'no <env>' >&2\nexit 1\n")
	model := filepath.Join(dir, "m.json")
	const m = `{"Objects": {"?": {"id": "env", "type": "t.Env"}, "apps": []},
"ObjectsCopy": {"?": {"id": "env", "type": "t.Env"}, "apps": [
  {"?": {"id": "app<1>&\"", "type": "t.App"}, "vm": {"?": {"id": "vm-1", "type": "t.VM",
     "dependencies": {"onDestruction": [{"subscriber": "env", "handler": "onGone"}]}}}},
  {"?": {"id": "ok-1", "type": "t.Ok"}}]}}`
	if err := os.WriteFile(model, []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "junit.xml")
	code, stdout, stderr := run(t, "", "apply", "--hooks-dir", hooks, "--write", model+".out", "--junit", report, model)
	if code != cmd.ExitIncomplete {
		t.Fatalf("exit %d; want %d\n%s%s", code, cmd.ExitIncomplete, stdout, stderr)
	}
	validateJUnit(t, report)
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	checkSafe(t, "junit", string(data))
	var doc junitDoc
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Suites) != 3 || doc.Suites[0].Name != "group 2" || doc.Suites[1].Name != "group 1" || doc.Suites[2].Name != "notifications" {
		t.Fatalf("suites %+v; want group 2, group 1, notifications", doc.Suites)
	}
	g2, g1, notes := doc.Suites[0], doc.Suites[1], doc.Suites[2]
	if g2.Tests != 1 || g2.Failures != 1 || g1.Tests != 2 || g1.Skipped != 1 || g1.Failures != 0 || notes.Tests != 1 || notes.Failures != 1 {
		t.Errorf("counts: %+v", doc.Suites)
	}
	vm := g2.Cases[0]
	if vm.Name != "vm-1" || vm.Classname != "t.VM" || vm.Failure == nil {
		t.Fatalf("vm case %+v", vm)
	}
	for _, want := range []string{"exit status 3", "quota <exceeded> & \"gone\"", `"\x1b[31mred\x01\x00nul"`, `"\ufffe last"`} {
		if !strings.Contains(vm.Failure.Text+vm.Failure.Message, want) {
			t.Errorf("failure lacks %q:\nmessage %q\n%s", want, vm.Failure.Message, vm.Failure.Text)
		}
	}
	app, ok := g1.Cases[0], g1.Cases[1]
	if app.Name != `app<1>&"` || app.Skipped == nil || !strings.Contains(app.Skipped.Message, "after vm-1, which failed") {
		t.Errorf("blocked app case %+v", app)
	}
	if ok.Name != "ok-1" || ok.Failure != nil || ok.Skipped != nil {
		t.Errorf("destroyed case %+v", ok)
	}
	n := notes.Cases[0]
	if n.Failure == nil || !strings.Contains(n.Failure.Text, "no <env>") || n.Classname != "objgc.notify.onGone" {
		t.Errorf("notification case %+v", n)
	}
}

// TestJUnitRefusedBeforeRunning: a --junit file that is an input is
// refused before any hook runs.
func TestJUnitRefusedBeforeRunning(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "m.json")
	if err := os.WriteFile(model, []byte(hostileModel("k", "vm-1", "onGone", "1")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "", "apply", "--write", model+".out", "--junit", model, model)
	if code != cmd.ExitError || !strings.Contains(stderr, "--junit") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(model + ".out"); err == nil {
		t.Error("apply ran")
	}
}
