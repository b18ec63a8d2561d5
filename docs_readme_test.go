package main

import (
	"fmt"
	"os"
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
// with test cases, as does a retried apply of the first plan.
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
	model, err := os.ReadFile(filepath.Join("testdata", "pairs", "app-removed.json"))
	if err != nil {
		t.Fatal(err)
	}
	script := `mkdir hooks
env GITHUB_STEP_SUMMARY=
exec sh -e recipe.sh
exists plan.json junit.xml summary.md
grep '^## ' summary.md
grep 'failures="0"' junit.xml
grep -count=3 '<testcase ' junit.xml
cp plan.json first-plan.json
exec objgc plan model.json --hooks-dir hooks --detailed-exitcode
rm junit.xml
exec sh -e recipe.sh
grep -count=1 '<testcase name="nothing to destroy"' junit.xml
exec objgc apply first-plan.json --junit retry.xml
stdout 'was applied already'
grep -count=3 '<testcase ' retry.xml
`
	runScript(t, script, "-- recipe.sh --\n"+recipe+"-- model.json --\n"+string(model))
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
