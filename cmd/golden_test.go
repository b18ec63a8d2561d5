package cmd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/objgc/objgc/internal/golden"

	"github.com/objgc/objgc/internal/gendocs"
)

// goldenCases are plans of the real models of ../testdata: each runs as
// objgc plan ARGS and is compared in text and JSON form. They plan with
// --no-hooks (no hooks dir, no package: dropping without hooks is
// meant), but for the one that shows apply's refusal of a plan without
// any hook source.
var goldenCases = []struct {
	name string
	args []string
	code int // exit status with --detailed-exitcode
}{
	{"app-removed", []string{"--no-hooks", "../testdata/pairs/app-removed.json"}, ExitWorkFound},
	{"app-moved", []string{"--no-hooks", "../testdata/pairs/app-moved.json"}, ExitOK},
	{"dangling-reference", []string{"--no-hooks", "../testdata/pairs/dangling-reference.json"}, ExitError}, // apply would refuse it
	{"dangling-reference-keep", []string{"--no-hooks", "../testdata/pairs/dangling-reference.json", "--on-dangling", "keep"}, ExitWorkFound},
	{"environment-deleted", []string{"--no-hooks", "../testdata/pairs/environment-deleted.json"}, ExitWorkFound},
	{"region-removed", []string{"--no-hooks", "../testdata/pairs/region-removed.json"}, ExitWorkFound},
	{"region-removed-handlers", []string{"--no-hooks", "../testdata/pairs/region-removed-handlers.json"}, ExitWorkFound},
	{"task-region-removed", []string{"--no-hooks", "../testdata/pairs/task-region-removed.json"}, ExitWorkFound},
	{"wordpress-app-removed", []string{"--no-hooks", "../testdata/pairs/wordpress-app-removed.json"}, ExitWorkFound},
	{"app-removed-no-hook-source", []string{"../testdata/pairs/app-removed.json"}, ExitError}, // apply would refuse it
	{"renamed-properties", []string{"--no-hooks", "--snapshot", "../testdata/models/model.json", "--graph", "../testdata/models/model_renamed.json"}, ExitOK},
	{"template-app-removed", []string{"--no-hooks", "--snapshot", "../testdata/models/murano_db-fixture_AppEnvTemplateFixture.json",
		"--graph", "../testdata/models/murano_db-fixture_ApplicationMysqlFixture.json"}, ExitError}, // a dangling reference
}

func runCmd(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), BuildInfo{Version: "test"}, args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestGoldenPlans(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	cache := t.TempDir()
	t.Setenv("OBJGC_CACHE_DIR", cache) // no packages: hierarchies are the class alone
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// JSON plans name absolute paths: the golden files hold them relative
	// to $REPO and $CACHE.
	stable := strings.NewReplacer(`"`+cache, `"$CACHE`, `"`+repo+string(filepath.Separator), `"$REPO/`)
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			checkGoldenPlan(t, tc.args, tc.name, stable, nil)
			// The same plan of the files mapped instead of read: copies
			// padded with white space to the size from which a model
			// is mapped (snapshot.ReadDocument), their names and sums
			// put back for the comparison.
			mapped, back := mappedCopies(t, repo, tc.args)
			checkGoldenPlan(t, mapped, tc.name, stable, back)
			args := append([]string{"plan", "--detailed-exitcode"}, tc.args...)
			if code, _, stderr := runCmd(t, "", args...); code != tc.code {
				t.Errorf("objgc %s: exit %d, want %d (stderr %q)", strings.Join(args, " "), code, tc.code, stderr)
			}
		})
	}
}

// mappedCopies copies the model files among args (those under
// ../testdata) into a folder of the test's, each padded with spaces after
// its JSON to 1 MiB, the size from which snapshot.ReadDocument maps a
// file, and returns args naming the copies and what turns the copies'
// paths (as given, and absolute under repo in a JSON plan) and sha256
// sums back into the originals' in a plan.
func mappedCopies(t *testing.T, repo string, args []string) ([]string, *strings.Replacer) {
	t.Helper()
	dir := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	var out, back []string
	for _, a := range args {
		rel, ok := strings.CutPrefix(a, "../")
		if !ok || !strings.HasSuffix(a, ".json") {
			out = append(out, a)
			continue
		}
		data, err := os.ReadFile(a)
		if err != nil {
			t.Fatal(err)
		}
		padded := append(data, bytes.Repeat([]byte(" "), max(0, 1<<20-len(data)))...)
		name := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, padded, 0o644); err != nil {
			t.Fatal(err)
		}
		given, err := filepath.Rel(wd, name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, given)
		back = append(back, given, a, name, filepath.Join(repo, rel),
			fmt.Sprintf("%x", sha256.Sum256(padded)), fmt.Sprintf("%x", sha256.Sum256(data)))
	}
	return out, strings.NewReplacer(back...)
}

// checkGoldenPlan compares objgc plan ARGS in each format with the golden
// files of name.
//
// back, when not nil, is applied to every format first.
func checkGoldenPlan(t *testing.T, planArgs []string, name string, stable, back *strings.Replacer) {
	t.Helper()
	for _, format := range []string{"text", "json", "dot"} {
		args := append([]string{"plan", "--format", format}, planArgs...)
		code, stdout, stderr := runCmd(t, "", args...)
		if code != ExitOK || stderr != "" {
			t.Fatalf("objgc %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr)
		}
		if back != nil {
			stdout = back.Replace(stdout)
		}
		if format == "json" {
			stdout = stable.Replace(stdout)
		}
		golden.Check(t, filepath.Join("testdata", "golden", name+"."+map[string]string{"text": "txt", "json": "json", "dot": "dot"}[format]), []byte(stdout))
	}
}

// TestManPageTitles checks that each page is titled with its own name, as
// man-pages(7) asks: objgc-plan.1 is OBJGC-PLAN(1), the title a reader sees
// in the page's header and footer and that apropos and whatis index.
func TestManPageTitles(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join("..", "docs", "man", "*.1"))
	if len(pages) == 0 {
		t.Fatal("no man pages in docs/man")
	}
	th := regexp.MustCompile(`(?m)^\.TH "([^"]*)" "1" `)
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.ToUpper(strings.TrimSuffix(filepath.Base(page), ".1"))
		m := th.FindSubmatch(data)
		if m == nil {
			t.Errorf("%s has no .TH line", page)
		} else if string(m[1]) != want {
			t.Errorf("%s is titled %q, want %q", page, m[1], want)
		}
	}
}

// committedManDate reads the month and year on the .TH line of
// docs/man/objgc.1.
func committedManDate(t *testing.T) time.Time {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docs", "man", "objgc.1"))
	if err != nil {
		t.Fatal(err)
	}
	date, err := gendocs.PageDate(data, "objgc")
	if err != nil {
		t.Fatalf("docs/man/objgc.1: %v", err)
	}
	return date
}

// TestManPagesRender renders every committed page with man(1) as a reader
// would (man -l) and checks that every <placeholder> of the command's help
// and flags is shown, that EXIT STATUS, ENVIRONMENT and FILES are sections
// of their own, and that the page carries the date it was made with.
func TestManPagesRender(t *testing.T) {
	manPath, err := exec.LookPath("man")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("man(1) is needed to check the man pages: %v (.ci/run installs man-db)", err)
		}
		t.Skipf("man(1) not installed: %v", err)
	}
	date := committedManDate(t).Format("Jan 2006")
	streams := &IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: os.Getenv}
	placeholder := regexp.MustCompile(`<[A-Za-z][^<>\n]*>`)
	var check func(c *cobra.Command)
	check = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() {
			return
		}
		page := filepath.Join("..", "docs", "man", strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		cmd := exec.Command(manPath, "-l", page)
		cmd.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=1000", "MAN_KEEP_FORMATTING=", "LANG=C.UTF-8")
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("man -l %s: %v", page, err)
			return
		}
		text := string(out)
		want := placeholder.FindAllString(c.Long, -1)
		for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.InheritedFlags()} {
			fs.VisitAll(func(f *pflag.Flag) { want = append(want, placeholder.FindAllString(f.Usage, -1)...) })
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("man -l %s does not show %s", page, w)
			}
		}
		for _, section := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "EXIT STATUS", "ENVIRONMENT", "FILES"} {
			if !regexp.MustCompile(`(?m)^` + section + `$`).MatchString(text) {
				t.Errorf("man -l %s has no %s section", page, section)
			}
		}
		if regexp.MustCompile(`(?m)^[ \t]+EXIT STATUS$`).MatchString(text) {
			t.Errorf("man -l %s: EXIT STATUS is still a paragraph of the description", page)
		}
		title := strings.ToUpper(strings.ReplaceAll(c.CommandPath(), " ", "-")) + "(1)"
		if first, _, _ := strings.Cut(strings.TrimLeft(text, "\n"), "\n"); !strings.HasPrefix(first, title) {
			t.Errorf("man -l %s: header %q, want it to start with %s", page, first, title)
		}
		if !strings.Contains(text, date) {
			t.Errorf("man -l %s is not dated %s", page, date)
		}
		for _, sub := range c.Commands() {
			check(sub)
		}
	}
	check(newRootCmd(BuildInfo{}, streams))
}
