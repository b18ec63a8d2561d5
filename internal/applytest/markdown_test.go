package applytest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/objgc/objgc/internal/modelgen"
)

// The Markdown format's bounds, as docs/plan-format.md states them: a
// diagram for at most 50 objects, a table of more than 50 rows folded, the
// summary at most 60,000 characters by default.
const (
	mermaidMaxObjects = 50
	markdownFoldRows  = 50
	markdownMaxChars  = 60000
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
	e := newEnv(t)
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
	r := e.objgc("plan", "--format", "markdown", path)
	code, out, stderr := r.code, r.stdout, r.stderr
	if code != exitOK {
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

// TestMarkdownMermaidCutOff: a diagram up to mermaidMaxObjects doomed
// objects, a sentence saying why there is none above.
func TestMarkdownMermaidCutOff(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	for _, n := range []int{mermaidMaxObjects, mermaidMaxObjects + 1} {
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
		r := e.objgc("plan", "--format", "markdown", path)
		code, out, stderr := r.code, r.stdout, r.stderr
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		has := strings.Contains(out, "```mermaid\n")
		if has != (n <= mermaidMaxObjects) {
			t.Errorf("%d objects: mermaid diagram %v", n, has)
		}
		if !has && !strings.Contains(out, fmt.Sprintf("No diagram: %d objects are more than %d.", n, mermaidMaxObjects)) {
			t.Errorf("%d objects: no sentence saying why there is no diagram:\n%s", n, out)
		}
	}
}

// mdRows returns the rows of the Markdown table that follows the header
// line starting with header.
func mdRows(md, header string) []string {
	var rows []string
	in := false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && strings.HasPrefix(line, "| ---"):
		case in && strings.HasPrefix(line, "| "):
			rows = append(rows, line)
		case in:
			return rows
		}
	}
	return rows
}

// TestMarkdownMaxChars: a generated plan of thousands of doomed objects,
// whose whole summary is far past the bound, gives a summary of at most
// markdownMaxChars characters by default (or the bound set by flag or
// variable) that keeps the counts, shows the first rows of each table
// folded in <details>, and says what it cut; with no bound, every row.
func TestMarkdownMaxChars(t *testing.T) {
	e := newEnv(t)
	snap, inc, st, err := modelgen.WriteFiles(t.TempDir(), modelgen.Config{Objects: 30000, RemoveApps: 0.1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// plan runs objgc plan --format markdown on the model with args and,
	// when maxChars is not empty, OBJGC_MARKDOWN_MAX_CHARS.
	plan := func(t *testing.T, maxChars string, args ...string) string {
		t.Helper()
		c, stdout, stderr := e.in(t).command(append([]string{"plan", "--snapshot", snap, "--graph", inc, "--format", "markdown"}, args...)...)
		if maxChars != "" {
			c.Env = append(c.Env, "OBJGC_MARKDOWN_MAX_CHARS="+maxChars)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		r := e.in(t).wait(c, stdout, stderr, time.Minute)
		if r.code != exitOK {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		return r.stdout
	}
	const objHeader, notHeader = "| group | type |", "| # | subscriber |"
	full := plan(t, "", "--markdown-max-chars", "0")
	allObjects, allNotes := mdRows(full, objHeader), mdRows(full, notHeader)
	if len(allObjects) != st.DoomedObjects {
		t.Fatalf("no bound: %d rows of objects, want %d", len(allObjects), st.DoomedObjects)
	}
	if utf8.RuneCountInString(full) <= markdownMaxChars || strings.Contains(full, "**Cut:**") {
		t.Fatalf("no bound: %d characters, a cut note %v: the model is too small for this test", utf8.RuneCountInString(full), strings.Contains(full, "**Cut:**"))
	}
	if want := fmt.Sprintf("<details><summary>%d objects</summary>\n\n%s", st.DoomedObjects, objHeader); !strings.Contains(full, want) {
		t.Errorf("no bound: the destruction order is not folded (%q)", want)
	}
	for _, c := range []struct {
		name  string
		args  []string
		env   string
		limit int
	}{
		{"default", nil, "", markdownMaxChars},
		{"flag", []string{"--markdown-max-chars", "20000"}, "", 20000},
		{"variable", nil, "5000", 5000},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := plan(t, c.env, c.args...)
			if n := utf8.RuneCountInString(out); n > c.limit {
				t.Errorf("%d characters, more than %d", n, c.limit)
			}
			// The counts are the whole plan's.
			if want := fmt.Sprintf("| %d | ", st.DoomedObjects); !strings.Contains(out, want) {
				t.Errorf("no counts row starting %q", want)
			}
			if head, _, _ := strings.Cut(full, "### Destruction order"); !strings.HasPrefix(out, head) {
				t.Errorf("the heading and the counts differ from the unbounded summary's")
			}
			for _, tab := range []struct {
				header, noun string
				all          []string
			}{{objHeader, "objects", allObjects}, {notHeader, "notifications", allNotes}} {
				rows := mdRows(out, tab.header)
				if len(rows) == 0 || len(rows) >= len(tab.all) {
					t.Errorf("%s: %d of %d rows shown", tab.noun, len(rows), len(tab.all))
					continue
				}
				for i, r := range rows {
					if r != tab.all[i] {
						t.Fatalf("%s row %d: %q, the unbounded summary has %q", tab.noun, i, r, tab.all[i])
					}
				}
				note := fmt.Sprintf("**Cut:** %d of %d %s shown: the summary is limited to %d characters (`--markdown-max-chars`).", len(rows), len(tab.all), tab.noun, c.limit)
				if !strings.Contains(out, note) {
					t.Errorf("no note %q", note)
				}
			}
		})
	}
	r := e.objgc("plan", "--snapshot", snap, "--graph", inc, "--format", "markdown", "--markdown-max-chars", "999")
	code, stderr := r.code, r.stderr
	if code != exitError || !strings.Contains(stderr, "--markdown-max-chars must be 0 (no limit) or at least 1000, not 999") {
		t.Errorf("--markdown-max-chars 999: exit %d, %s", code, stderr)
	}
}

// TestMarkdownFoldsLongTable: a summary under the bound keeps every row;
// a table longer than markdownFoldRows rows is folded, a shorter one
// is not (the bytes of small plans are the goldens').
func TestMarkdownFoldsLongTable(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	for _, n := range []int{markdownFoldRows, markdownFoldRows + 1} {
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
		r := e.objgc("plan", "--format", "markdown", path)
		code, out, stderr := r.code, r.stdout, r.stderr
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if rows := mdRows(out, "| group |"); len(rows) != n {
			t.Errorf("%d objects: %d rows", n, len(rows))
		}
		folded := strings.Contains(out, fmt.Sprintf("<details><summary>%d objects</summary>\n\n| group |", n)) && strings.Contains(out, "\n</details>\n")
		if folded != (n > markdownFoldRows) || strings.Contains(out, "**Cut:**") {
			t.Errorf("%d objects: folded %v, cut %v:\n%s", n, folded, strings.Contains(out, "**Cut:**"), out)
		}
	}
}
