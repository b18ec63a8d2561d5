package cmd_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestUserDocsStandAlone: README.md and docs/ describe the behaviour
// without pointing at files a user of objgc does not have (the design
// document and the material it was built from, kept outside the
// repository).
func TestUserDocsStandAlone(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "README.md"))
	outside := regexp.MustCompile(`DESIGN(\.md)?|\.\./shared|shared/|seeds/`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range outside.FindAllIndex(data, -1) {
			t.Errorf("%s points at %q, which users do not have: state the rule instead", f, data[m[0]:m[1]])
		}
	}
}
