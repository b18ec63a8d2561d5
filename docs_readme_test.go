package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// docSection returns the text of the section of the Markdown file name
// whose heading line starts with heading ("## Quick start"), up to the
// next "## " heading, failing the test when there is none.
func docSection(t *testing.T, name, heading string) string {
	t.Helper()
	doc, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n"+heading)
	if !ok {
		t.Fatalf("%s has no %q section", name, heading)
	}
	_, section, _ = strings.Cut(section, "\n") // the rest of the heading line
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}

// runScript runs a testscript made of script and the files of archive
// (txtar "-- name --" sections), with the real objgc on PATH.
func runScript(t *testing.T, script, archive string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "doc.txtar"), []byte(script+archive), 0o644); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", filepath.Join(env.WorkDir, ".home"))
			env.Setenv("OBJGC_SYSTEM_CONFIG", filepath.Join(env.WorkDir, ".etc", "objgc", "config.yaml"))
			env.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			return nil
		},
	})
}

// TestReadmeCIRecipe runs README.md's CI recipe as written, on a real
// Murano model with two applications removed and an empty hooks dir:
// the first run plans, summarises and applies; the second, on the model
// written back, finds nothing to destroy; each leaves a JUnit report
// with test cases, as does a retried apply of the first plan. Then the
// paths on which the job fails, each of which must leave this run's
// report too, valid against the JUnit schema: plan exits 1 because apply
// would refuse (a dangling reference), because the model cannot be read,
// or because the hooks dir is not there; apply exits 5 because the model
// changed after the plan (an objgc first on PATH appends a line to the
// model when the recipe runs objgc show, as a push between two steps
// would).
func TestReadmeCIRecipe(t *testing.T) {
	var recipe string
	for _, b := range fencedBlocks(docSection(t, "README.md", "## In a CI pipeline")) {
		if b.lang == "sh" {
			recipe = b.body
			break
		}
	}
	if !strings.Contains(recipe, "objgc apply plan.json") {
		t.Fatal("README.md's CI recipe has no sh block applying plan.json")
	}
	if _, err := exec.LookPath("xmllint"); err != nil && os.Getenv("CI") == "true" {
		t.Fatal("xmllint (libxml2-utils) validates the JUnit reports, and CI=true: it must be installed")
	}
	var files strings.Builder
	files.WriteString("-- recipe.sh --\n" + recipe)
	for name, pair := range map[string]string{"model.json": "app-removed.json", "dangling.json": "dangling-reference.json"} {
		model, err := os.ReadFile(filepath.Join("testdata", "pairs", pair))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&files, "-- %s --\n%s", name, model)
	}
	files.WriteString(`-- bad.json --
{"Objects": [}
-- wrap/objgc --
#!/bin/sh
# The model changes once it was planned and shown.
if [ "$1" = show ]; then echo >> model.json; fi
PATH=${PATH#*:}
export PATH
exec objgc "$@"
`)
	schema, err := filepath.Abs(filepath.Join("cmd", "testdata", "junit.xsd"))
	if err != nil {
		t.Fatal(err)
	}
	xmllint := "[exec:xmllint] exec xmllint --noout --schema " + schema + " junit.xml\n"
	script := `cp model.json app-removed.json
mkdir hooks
env GITHUB_STEP_SUMMARY=
exec sh -e recipe.sh
exists plan.json junit.xml summary.md
grep '^## ' summary.md
grep 'failures="0"' junit.xml
grep -count=3 '<testcase ' junit.xml
` + xmllint + `cp plan.json first-plan.json
exec objgc plan model.json --hooks-dir hooks --detailed-exitcode
rm junit.xml
exec sh -e recipe.sh
grep -count=1 '<testcase name="nothing to destroy"' junit.xml
` + xmllint + `exec objgc apply first-plan.json --junit retry.xml
stdout 'was applied already'
grep -count=3 '<testcase ' retry.xml

# plan exits 1: apply would refuse the plan (a dangling reference).
cp dangling.json model.json
rm junit.xml
exec sh -c 'sh -e recipe.sh; echo "exit $?"'
stdout '^exit 1$'
stderr '^objgc: apply would refuse this plan: 1 dangling reference'
grep '<testcase name="dangling_references" classname="objgc.plan"' junit.xml
grep -count=2 '<skipped message="planned: ' junit.xml
` + xmllint + `
# plan exits 1: the model cannot be read.
cp bad.json model.json
rm junit.xml
exec sh -c 'sh -e recipe.sh; echo "exit $?"'
stdout '^exit 1$'
grep '<testcase name="error" classname="objgc.plan"' junit.xml
grep '<error message="model.json:1:.*" type="error">' junit.xml
` + xmllint + `
# plan exits 1: the checkout has no hooks dir.
cp app-removed.json model.json
rm junit.xml
mv hooks hooks.away
exec sh -c 'sh -e recipe.sh; echo "exit $?"'
stdout '^exit 1$'
grep '<error message="hooks dir hooks \(from --hooks-dir\): .*" type="error">' junit.xml
` + xmllint + `mv hooks.away hooks

# apply exits 5: the model changed between the plan and the apply; it
# writes the report and nothing else (the earlier applies' lock file
# goes first, to show that).
rm junit.xml model.json.lock
env PATH=$WORK/wrap:$PATH
chmod 755 wrap/objgc
exec sh -c 'sh -e recipe.sh; echo "exit $?"'
stdout '^exit 5$'
stderr '^objgc: plan plan.json is stale: .*model.json changed since it was planned'
grep '<testcase name="stale_plan" classname="objgc.apply"' junit.xml
grep -count=3 '<skipped message="not destroyed: apply ran nothing' junit.xml
! grep 'classname="objgc.plan"' junit.xml
` + xmllint + `! exists model.json.lock
`
	runScript(t, script, files.String())
}

// TestReadmeCronLine runs the command of README.md's crontab line on a
// cache that a murano.conf names, in place of /etc/murano/murano.conf: of
// three versions of a package the oldest goes, and --quiet prints
// nothing.
func TestReadmeCronLine(t *testing.T) {
	var line string
	for _, b := range fencedBlocks(docSection(t, "README.md", "## From cron")) {
		if b.lang == "crontab" {
			line = strings.TrimSpace(b.body)
		}
	}
	fields := strings.Fields(line)
	if len(fields) < 7 || fields[5] != "objgc" {
		t.Fatalf("README.md's crontab line %q is not five time fields and an objgc command", line)
	}
	command := strings.Join(fields[5:], " ")
	if !strings.Contains(command, "/etc/murano/murano.conf") {
		t.Fatalf("README.md's crontab command %q does not name /etc/murano/murano.conf", command)
	}
	command = strings.ReplaceAll(command, "/etc/murano/murano.conf", "murano.conf")
	var script, files strings.Builder
	script.WriteString("exec sh -c 'sed \"s|WORK|$WORK|\" murano.conf.in > murano.conf'\n")
	for i, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		fmt.Fprintf(&script, "exec objgc cache add --murano-config murano.conf pkg%d\n", i)
		fmt.Fprintf(&files, "-- pkg%d/manifest.yaml --\nFormat: 1.0\nType: Application\nFullName: com.example.things\nName: Things\nVersion: %s\nClasses:\n  com.example.Thing: thing.yaml\n", i, v)
		fmt.Fprintf(&files, "-- pkg%d/Classes/thing.yaml --\nNamespaces:\n  =: com.example\nName: Thing\n", i)
	}
	fmt.Fprintf(&script, "exec %s\n", command)
	script.WriteString("! stdout .\n! stderr .\n")
	script.WriteString("exec objgc cache list --murano-config murano.conf\n")
	script.WriteString("! stdout 'com\\.example\\.things +1\\.0\\.0'\n")
	script.WriteString("stdout 'com\\.example\\.things +1\\.1\\.0'\n")
	script.WriteString("stdout 'com\\.example\\.things +1\\.2\\.0'\n")
	files.WriteString("-- murano.conf.in --\n[engine]\npackages_cache = WORK/engine\n")
	runScript(t, script.String(), files.String())
}

// TestReadmeCompletionLines runs the lines of README.md's install block
// that set up bash's completion, as written, for an account that has no
// ~/.local/share yet: the script is where bash-completion looks for it.
func TestReadmeCompletionLines(t *testing.T) {
	var lines []string
	for _, b := range fencedBlocks(docSection(t, "README.md", "## Install")) {
		if b.lang == "sh" && strings.Contains(b.body, "objgc completion bash") {
			for _, l := range strings.Split(strings.TrimSpace(b.body), "\n") {
				if !strings.HasPrefix(l, "sudo ") {
					lines = append(lines, l)
				}
			}
		}
	}
	if len(lines) == 0 {
		t.Fatal("README.md's install section has no sh block with objgc completion bash")
	}
	script := `! exists .home/.local
exec sh -e lines.sh
grep '__start_objgc' .home/.local/share/bash-completion/completions/objgc
`
	runScript(t, script, "-- lines.sh --\n"+strings.Join(lines, "\n")+"\n")
}
