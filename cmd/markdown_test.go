package cmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/objgc/objgc/cmd"
)

// gfmCells counts the cells of a GFM table row as GitHub's and GitLab's
// parsers split it (github.github.com/gfm, "Tables"): at every '|' that a
// backslash does not escape, code spans included.
func gfmCells(row string) int {
	n := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n - 1
}

// TestMarkdownHostileIDs: ids built to break a table, open a code span,
// inject HTML, mention someone or end a Mermaid label stay inside their
// cell and label, shown as they are.
func TestMarkdownHostileIDs(t *testing.T) {
	isolate(t)
	hostile := []string{
		"a|b", `a\|b`, "x`y", "``", "<img src=x onerror=alert(1)>", `say "hi"`, "[click](https://evil.example)",
		"@root #1 !2", "**bold** _it_", "end\\", "a\u202eb", "#quot;", "--> n0", "\"]\n",
	}
	dir := t.TempDir()
	var apps []string
	for i, id := range hostile {
		if i == len(hostile)-1 {
			id = `"]` // the newline version is refused; keep the quote
		}
		hostile[i] = id
		apps = append(apps, fmt.Sprintf(`{"?": {"id": %q, "type": "t.App"}, "vm": {"?": {"id": %q, "type": "t.VM/1<b>|@p"}}}`, id, id+"/vm"))
	}
	model := fmt.Sprintf(`{"Objects": {"?": {"id": "env", "type": "t.Env"}, "apps": []},
"ObjectsCopy": {"?": {"id": "env", "type": "t.Env"}, "apps": [%s]}}`, strings.Join(apps, ","))
	path := filepath.Join(dir, "m.json")
	if err := os.WriteFile(path, []byte(model), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "", "plan", "--format", "markdown", path)
	if code != cmd.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkSafe(t, "markdown", out)
	width := -1
	inMermaid := false
	// A label: two escaped texts joined by <br>, every '#' an entity code.
	text := `([^"<>#` + "`" + `]|#\d+;)*`
	label := regexp.MustCompile(`^    n\d+\["` + text + `<br>` + text + `"\]$`)
	edge := regexp.MustCompile(`^  n\d+ (-->|-\.->) n\d+$`)
	rows := 0
	codeSpan := regexp.MustCompile("``` .*? ```|`` .*? ``|` [^`]*? `")
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "```mermaid":
			inMermaid = true
		case line == "```":
			inMermaid = false
		case inMermaid:
			if !label.MatchString(line) && !edge.MatchString(line) && line != "flowchart LR" && line != "  end" &&
				!regexp.MustCompile(`^  subgraph g\d+\["group \d+"\]$`).MatchString(line) {
				t.Errorf("mermaid line not a plain node, edge or group: %q", line)
			}
		case strings.HasPrefix(line, "| group |"):
			width = gfmCells(line)
		case strings.HasPrefix(line, "| ") && width > 0 && strings.Contains(line, "/vm"):
			rows++
			if got := gfmCells(line); got != width {
				t.Errorf("row has %d cells, header %d: %q", got, width, line)
			}
		case line == "":
			width = -1
		}
		// Outside code spans (whose content CommonMark shows literally),
		// the only '<' is objgc's own <br>.
		if outside := codeSpan.ReplaceAllString(line, ""); strings.Contains(strings.ReplaceAll(outside, "<br>", ""), "<") {
			t.Errorf("raw '<' (HTML) in %q", line)
		}
	}
	if inMermaid {
		t.Error("the mermaid block is not closed")
	}
	if rows != len(hostile) {
		t.Errorf("%d rows of the destruction table with a /vm id, want %d:\n%s", rows, len(hostile), out)
	}
	// Ids without a '|' are shown as code spans, exactly.
	for _, id := range []string{"x`y", "<img src=x onerror=alert(1)>", "@root #1 !2", "[click](https://evil.example)"} {
		fence := "`"
		if strings.Contains(id, "`") {
			fence = "``"
		}
		if want := fence + " " + id + "/vm " + fence; !strings.Contains(out, want) {
			t.Errorf("no %s in:\n%s", want, out)
		}
	}
}

// TestMarkdownMermaidCutOff: a diagram up to cmd.MermaidMaxObjects doomed
// objects, a sentence saying why there is none above.
func TestMarkdownMermaidCutOff(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	for _, n := range []int{cmd.MermaidMaxObjects, cmd.MermaidMaxObjects + 1} {
		var apps []string
		for i := 0; i < n; i++ {
			apps = append(apps, fmt.Sprintf(`{"?": {"id": "app%d", "type": "t.App"}}`, i))
		}
		path := filepath.Join(dir, fmt.Sprintf("m%d.json", n))
		model := fmt.Sprintf(`{"Objects": {"?": {"id": "env", "type": "t.Env"}, "apps": []},
"ObjectsCopy": {"?": {"id": "env", "type": "t.Env"}, "apps": [%s]}}`, strings.Join(apps, ","))
		if err := os.WriteFile(path, []byte(model), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := run(t, "", "plan", "--format", "markdown", path)
		if code != cmd.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		has := strings.Contains(out, "```mermaid\n")
		if has != (n <= cmd.MermaidMaxObjects) {
			t.Errorf("%d objects: mermaid diagram %v", n, has)
		}
		if !has && !strings.Contains(out, fmt.Sprintf("No diagram: %d objects are more than %d.", n, cmd.MermaidMaxObjects)) {
			t.Errorf("%d objects: no sentence saying why there is no diagram:\n%s", n, out)
		}
	}
}
