package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// quickstartDirRE finds the directory docs/hooks.md's quick start says it
// runs in ("In an empty directory (here `DIR`)"); its output names it.
// Nothing is read there: the test runs in its own directory and writes
// that one as DIR in the output it compares.
var quickstartDirRE = regexp.MustCompile("\\(here `([^`]+)`\\)")

// TestHooksQuickstart runs the quick start of docs/hooks.md as written:
// each ```sh block of the section, in order, in one empty directory, with
// the real objgc on PATH; a ```text block that follows one is its output
// (stdout and stderr), with the directory written as the page names it. A
// step that fails, or whose output differs, fails the test.
func TestHooksQuickstart(t *testing.T) {
	section := docSection(t, filepath.Join("docs", "hooks.md"), "## Quick start")
	blocks := fencedBlocks(section)
	dir := quickstartDirRE.FindStringSubmatch(section)
	if dir == nil {
		t.Fatal("docs/hooks.md's quick start does not name its directory as (here `DIR`)")
	}
	var script, files strings.Builder
	steps := 0
	for i, b := range blocks {
		if b.lang != "sh" {
			continue
		}
		steps++
		fmt.Fprintf(&script, "exec sh run.sh step%d.sh\n", steps)
		fmt.Fprintf(&files, "-- step%d.sh --\n%s", steps, b.body)
		if i+1 < len(blocks) && blocks[i+1].lang == "text" {
			fmt.Fprintf(&script, "cmp stdout step%d.want\n", steps)
			fmt.Fprintf(&files, "-- step%d.want --\n%s", steps, blocks[i+1].body)
		}
	}
	if steps == 0 || !strings.Contains(section, "objgc plan --hooks-dir") {
		t.Fatal("docs/hooks.md's quick start has no sh block, or none running objgc plan --hooks-dir")
	}
	// run.sh runs one step, its stderr with its stdout, and writes the
	// directory as the page does.
	files.WriteString("-- run.sh --\n" +
		"sh -e \"$1\" >out 2>&1 && s=0 || s=$?\n" +
		"sed \"s#$PWD#" + dir[1] + "#g\" out\n" +
		"rm out\nexit $s\n")
	runScript(t, script.String(), files.String())
}

type fencedBlock struct{ lang, body string }

// fencedBlocks returns the fenced code blocks of markdown text, each
// body with the fence's indentation taken off every line.
func fencedBlocks(text string) []fencedBlock {
	var out []fencedBlock
	lines := strings.SplitAfter(text, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		lang := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
		var body strings.Builder
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			l := lines[i]
			if len(l)-len(strings.TrimLeft(l, " ")) >= indent {
				l = l[indent:]
			} else {
				l = strings.TrimLeft(l, " ")
			}
			body.WriteString(l)
		}
		out = append(out, fencedBlock{lang, body.String()})
	}
	return out
}
