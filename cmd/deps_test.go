package cmd

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDomainPackagesStayInward checks that the domain packages import no
// CLI library and not cmd/: dependencies point inward, so that the domain
// can be read, tested and reused without the command line.
func TestDomainPackagesStayInward(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	forbidden := []string{
		"github.com/spf13/cobra", "github.com/spf13/viper", "github.com/spf13/pflag",
		"github.com/fatih/color", "github.com/objgc/objgc/cmd",
	}
	for _, pkg := range []string{"../snapshot", "../diff", "../destroy/...", "../pkgcache/..."} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			if strings.Contains(string(out), "matched no packages") || strings.Contains(string(out), "no Go files") {
				continue
			}
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}

// TestInternalPackagesDoNotImportCmd: the packages under internal/ serve
// cmd and the domain packages, never the other way round; one that needs
// the command tree (the man page writer) is handed it by its caller.
// Their tests may run objgc through cmd.
func TestInternalPackagesDoNotImportCmd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "../internal/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ../internal/...: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/objgc/objgc/cmd" {
			t.Errorf("a package under internal/ depends on %s", dep)
		}
	}
}

// TestBinaryCarriesNoDocGenerator: the objgc binary links what it runs,
// not the man page generator (cobra/doc, go-md2man, blackfriday), which
// tools/gendocs runs at build time.
func TestBinaryCarriesNoDocGenerator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "..").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ..: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range []string{"github.com/spf13/cobra/doc", "github.com/cpuguy83/go-md2man", "github.com/russross/blackfriday", "github.com/objgc/objgc/internal/gendocs"} {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("objgc depends on %s", dep)
			}
		}
	}
}
