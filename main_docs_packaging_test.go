package main

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/objgc/objgc/cmd"
)

// packagedFiles returns the paths the .deb (deb true) or the .rpm
// installs beside the binary: the dst of every entry of .goreleaser.yml's
// nfpms contents for that packager, and bindir/objgc.
func packagedFiles(t *testing.T, deb bool) []string {
	t.Helper()
	data, err := os.ReadFile(".goreleaser.yml")
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Nfpms []struct {
			Bindir   string `yaml:"bindir"`
			Contents []struct {
				Src, Dst, Type, Packager string
			} `yaml:"contents"`
		} `yaml:"nfpms"`
	}
	if err := yaml.Unmarshal(data, &conf); err != nil {
		t.Fatal(err)
	}
	if len(conf.Nfpms) != 1 {
		t.Fatalf(".goreleaser.yml has %d nfpms sections, want 1", len(conf.Nfpms))
	}
	files := []string{conf.Nfpms[0].Bindir + "/objgc"}
	for _, c := range conf.Nfpms[0].Contents {
		if c.Packager == "" || (c.Packager == "deb") == deb {
			if !strings.HasSuffix(c.Dst, "/") || c.Src == "" {
				files = append(files, c.Dst)
				continue
			}
			// A glob into a directory: the man pages, which
			// packaging/prepare.sh gzips from docs/man.
			src, ok := strings.CutPrefix(c.Src, "packaging/build/man/")
			if !ok || !strings.HasSuffix(src, ".gz") {
				t.Fatalf(".goreleaser.yml: %s into %s: the test knows no such glob", c.Src, c.Dst)
			}
			pages, _ := filepath.Glob(filepath.Join("docs", "man", strings.TrimSuffix(src, ".gz")))
			if len(pages) == 0 {
				t.Fatalf(".goreleaser.yml: %s matches no page of docs/man", c.Src)
			}
			for _, p := range pages {
				files = append(files, c.Dst+filepath.Base(p)+".gz")
			}
		}
	}
	return files
}

// covers reports whether documented, a path as the docs give it (a
// glob, or a directory ending in "/"), names installed.
func covers(documented, installed string) bool {
	if ok, _ := path.Match(documented, installed); ok {
		return true
	}
	return strings.HasSuffix(documented, "/") && strings.HasPrefix(installed+"/", documented)
}

// TestReadmeInstallTableIsThePackage: README.md's table of what the .deb
// and .rpm install names every file they install (by itself, a glob or
// its directory) and nothing they do not.
func TestReadmeInstallTableIsThePackage(t *testing.T) {
	section := docSection(t, "README.md", "## Install")
	var documented []string
	tick := regexp.MustCompile("`(/[^`]*)`")
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `/") {
			continue
		}
		cell := strings.Split(line, "|")[1]
		for _, m := range tick.FindAllStringSubmatch(cell, -1) {
			documented = append(documented, m[1])
		}
	}
	if len(documented) == 0 {
		t.Fatal("README.md's install section has no table of installed paths")
	}
	installed := append(packagedFiles(t, true), packagedFiles(t, false)...)
	for _, f := range installed {
		if !slices.ContainsFunc(documented, func(d string) bool { return covers(d, f) }) {
			t.Errorf("the package installs %s, which README.md's install table does not name", f)
		}
	}
	for _, d := range documented {
		if !slices.ContainsFunc(installed, func(f string) bool { return covers(d, f) }) {
			t.Errorf("README.md's install table names %s, which the package does not install", d)
		}
	}
}

// TestManFilesArePackaged: the FILES section of objgc(1) names every
// configuration file and unit the package installs (under /etc and
// /usr/lib/systemd), and every such path it names is installed.
func TestManFilesArePackaged(t *testing.T) {
	var terms []string
	for _, s := range cmd.ManSections(cmd.ManTree()) {
		if s.Title != "FILES" {
			continue
		}
		for _, e := range s.Entries {
			terms = append(terms, strings.Split(e.Term, ", ")...)
			terms = append(terms, regexp.MustCompile(`/etc/objgc/[^ ,;)]+`).FindAllString(e.Text, -1)...)
		}
	}
	ours := func(p string) bool {
		return strings.HasPrefix(p, "/etc/objgc") || p == "/etc/default/objgc" || strings.HasPrefix(p, "/usr/lib/systemd/")
	}
	installed := append(packagedFiles(t, true), packagedFiles(t, false)...)
	for _, f := range installed {
		if ours(f) && !slices.ContainsFunc(terms, func(d string) bool { return covers(d, f) }) {
			t.Errorf("the package installs %s, which objgc(1)'s FILES does not name", f)
		}
	}
	for _, d := range terms {
		if ours(d) && !slices.ContainsFunc(installed, func(f string) bool { return covers(d, f) }) {
			t.Errorf("objgc(1)'s FILES names %s, which the package does not install", d)
		}
	}
}

// TestCacheDocsArePackaged: docs/cache.md shows the packaged unit's
// ExecStart= and its defaults, the drop-in examples the package installs
// as they are, and the crontab line of README.md, which is the unit's
// prune with its defaults and --quiet.
func TestCacheDocsArePackaged(t *testing.T) {
	env, exec := readUnit(filepath.Join("packaging", "systemd", "objgc-prune.service"))
	doc, err := os.ReadFile(filepath.Join("docs", "cache.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	if !strings.Contains(text, "\n    ExecStart="+exec+"\n") {
		t.Errorf("docs/cache.md does not show the unit's ExecStart=%s", exec)
	}
	for k, v := range env {
		if !strings.Contains(text, "`"+k+"="+v+"`") {
			t.Errorf("docs/cache.md does not give the unit's default `%s=%s`", k, v)
		}
	}
	examples, _ := filepath.Glob(filepath.Join("packaging", "examples", "*"))
	more, _ := filepath.Glob(filepath.Join("packaging", "examples", "*", "*"))
	for _, ex := range append(examples, more...) {
		if st, err := os.Stat(ex); err != nil || st.IsDir() {
			continue
		}
		data, err := os.ReadFile(ex)
		if err != nil {
			t.Fatal(err)
		}
		var indented []string
		for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
			if l != "" {
				l = "    " + l
			}
			indented = append(indented, l)
		}
		if !strings.Contains(text, "\n"+strings.Join(indented, "\n")+"\n") {
			t.Errorf("docs/cache.md does not show %s as it is", ex)
		}
		dst := "/usr/share/doc/objgc/examples/" + strings.TrimPrefix(filepath.ToSlash(ex), "packaging/examples/")
		if !slices.Contains(packagedFiles(t, true), dst) || !slices.Contains(packagedFiles(t, false), dst) {
			t.Errorf("%s is not installed as %s", ex, dst)
		}
	}
	if strings.Contains(text, "/etc/systemd/system/objgc-prune.service\n") || strings.Contains(text, "/usr/local/bin/objgc") {
		t.Error("docs/cache.md shows a unit of its own in place of the packaged one, or a binary the package does not install")
	}

	cron := func(name, heading string) string {
		for _, line := range strings.Split(docSection(t, name, heading), "\n") {
			if f := strings.Fields(line); len(f) > 5 && f[5] == "objgc" && strings.HasPrefix(strings.TrimSpace(line), "17 3 ") {
				return strings.Join(f[5:], " ")
			}
		}
		t.Fatalf("%s: no crontab line in %q", name, heading)
		return ""
	}
	want := "objgc cache prune --murano-config " + env["MURANO_CONFIG"] + " " + env["PRUNE_POLICY"] + " --quiet"
	if got := cron("README.md", "## From cron"); got != want {
		t.Errorf("README.md's crontab line runs %q, want the unit's prune %q", got, want)
	}
	if got := cron(filepath.Join("docs", "cache.md"), "## On an engine host"); got != want {
		t.Errorf("docs/cache.md's crontab line runs %q, want the unit's prune %q", got, want)
	}
}
