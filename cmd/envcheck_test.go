package cmd

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestWarnUnknownVariablesEscapes: a variable's name is the environment's,
// so it is shown as termsafe shows it, on one line.
func TestWarnUnknownVariablesEscapes(t *testing.T) {
	var out bytes.Buffer
	root := newRootCmd(BuildInfo{}, &IO{Out: &out, Err: &out})
	warnUnknownVariables(&out, root, []string{"OBJGC_A\x1b[2J\nB=1", "OBJGC_EVENT=notify", "OBJGC_EMPTY="})
	want := "objgc: warning: \"OBJGC_A\\x1b[2J\\nB\" is not a setting; it is ignored\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	if strings.Count(out.String(), "\n") != 1 {
		t.Errorf("not one line: %q", out.String())
	}
}

// TestDocsNameRealVariables: every OBJGC_* variable README.md and docs/
// name is a setting, one objgc gives its hooks or one of its tests reads,
// except the wrong names the pages show on purpose (the errors and
// warnings they get).
func TestDocsNameRealVariables(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "README.md"))
	root := newRootCmd(BuildInfo{}, &IO{Out: io.Discard, Err: io.Discard})
	var environ []string
	names := regexp.MustCompile(`OBJGC_[A-Z0-9_]*[A-Z0-9]\b`)
	where := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names.FindAllString(string(data), -1) {
			environ = append(environ, n+"=1")
			where[n] = f
		}
	}
	shownWrong := map[string]bool{
		"OBJGC_FORMAT": true, "OBJGC_PARALLELISM": true, "OBJGC_VERSION": true,
		"OBJGC_PLAN_FROMAT": true, "OBJGC_DRY_RUN": true, "OBJGC_APPLY_NO_HOOKS": true,
	}
	var out bytes.Buffer
	// The root: an unscoped name is unknown wherever it is written.
	warnUnknownVariables(&out, root, environ)
	for line := range strings.Lines(out.String()) {
		name := strings.Fields(strings.TrimPrefix(line, "objgc: warning: "))[0]
		if !shownWrong[name] {
			t.Errorf("%s names %s, which sets nothing: %s", where[name], name, strings.TrimSpace(line))
		}
	}
}
