package cmd

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenCases are plans of the real models of ../testdata: each runs as
// objgc plan ARGS and is compared in text and JSON form.
var goldenCases = []struct {
	name string
	args []string
	code int // exit status with --detailed-exitcode
}{
	{"app-removed", []string{"../testdata/pairs/app-removed.json"}, ExitWorkFound},
	{"app-moved", []string{"../testdata/pairs/app-moved.json"}, ExitOK},
	{"dangling-reference", []string{"../testdata/pairs/dangling-reference.json"}, ExitWorkFound},
	{"dangling-reference-keep", []string{"../testdata/pairs/dangling-reference.json", "--on-dangling", "keep"}, ExitWorkFound},
	{"environment-deleted", []string{"../testdata/pairs/environment-deleted.json"}, ExitWorkFound},
	{"region-removed", []string{"../testdata/pairs/region-removed.json"}, ExitWorkFound},
	{"region-removed-handlers", []string{"../testdata/pairs/region-removed-handlers.json"}, ExitWorkFound},
	{"task-region-removed", []string{"../testdata/pairs/task-region-removed.json"}, ExitWorkFound},
	{"wordpress-app-removed", []string{"../testdata/pairs/wordpress-app-removed.json"}, ExitWorkFound},
	{"renamed-properties", []string{"--snapshot", "../testdata/models/model.json", "--graph", "../testdata/models/model_renamed.json"}, ExitOK},
	{"template-app-removed", []string{"--snapshot", "../testdata/models/murano_db-fixture_AppEnvTemplateFixture.json",
		"--graph", "../testdata/models/murano_db-fixture_ApplicationMysqlFixture.json"}, ExitWorkFound},
}

func runCmd(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), BuildInfo{Version: "test"}, args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd -run Golden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./cmd -run Golden -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
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
			for _, format := range []string{"text", "json", "dot"} {
				args := append([]string{"plan", "--format", format}, tc.args...)
				code, stdout, stderr := runCmd(t, "", args...)
				if code != ExitOK || stderr != "" {
					t.Fatalf("objgc %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr)
				}
				if format == "json" {
					stdout = stable.Replace(stdout)
				}
				checkGolden(t, tc.name+"."+map[string]string{"text": "txt", "json": "json", "dot": "dot"}[format], []byte(stdout))
			}
			args := append([]string{"plan", "--detailed-exitcode"}, tc.args...)
			if code, _, stderr := runCmd(t, "", args...); code != tc.code {
				t.Errorf("objgc %s: exit %d, want %d (stderr %q)", strings.Join(args, " "), code, tc.code, stderr)
			}
		})
	}
}

// TestManPagesUpToDate fails when docs/man is stale: run go generate ./cmd.
func TestManPagesUpToDate(t *testing.T) {
	dir := t.TempDir()
	if err := GenManPages(dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	committed, _ := filepath.Glob(filepath.Join("..", "docs", "man", "*.1"))
	if len(committed) != len(entries) {
		t.Errorf("docs/man has %d pages, the commands make %d: run go generate ./cmd", len(committed), len(entries))
	}
	for _, e := range entries {
		got, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		want, err := os.ReadFile(filepath.Join("..", "docs", "man", e.Name()))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("docs/man/%s is stale: run go generate ./cmd", e.Name())
		}
	}
}
