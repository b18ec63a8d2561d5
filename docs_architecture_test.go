package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestArchitectureNamesRealThings keeps docs/architecture.md right as the
// code moves: every file or directory it names in backquotes exists
// (a path from the repository's root, or a file name found somewhere in
// it), every Go name it gives (runSettings, config.load,
// Prepared.Refusals) is declared by the repository's code, and every
// package under internal/ is in its table.
func TestArchitectureNamesRealThings(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{} // base names of the repository's files
	var code strings.Builder   // every Go file, declarations searched below
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" && path != filepath.Join("cmd", "testdata")) {
			return fs.SkipDir
		}
		files[d.Name()] = true
		if strings.HasSuffix(path, ".go") {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			code.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	src := code.String()
	declared := func(name string) bool {
		q := regexp.QuoteMeta(name)
		return regexp.MustCompile(`(?m)(^func (\([^)]*\) )?` + q + `[(\[]|^type ` + q + `\b|^\t` + q + `\s|^(var|const) ` + q + `\b|^\t` + q + ` +=)`).MatchString(src)
	}
	goName := regexp.MustCompile(`^\*?[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$`)
	for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(string(doc), -1) {
		tok := m[1]
		switch {
		case strings.Contains(tok, " ") || strings.HasPrefix(tok, "-") || strings.HasPrefix(tok, "$") || strings.Contains(tok, "*") && !strings.HasPrefix(tok, "*"):
			// A command line, a flag, a variable, a pattern.
		case strings.Contains(tok, "/") || strings.HasSuffix(tok, ".go"):
			if _, err := os.Stat(tok); err != nil && !files[tok] {
				t.Errorf("docs/architecture.md names %s, which is not in the repository", tok)
			}
		case goName.MatchString(tok):
			parts := strings.Split(strings.TrimPrefix(tok, "*"), ".")
			last := parts[len(parts)-1]
			switch {
			case parts[0] == "os" || strings.ToUpper(tok) == tok:
				// The standard library's, an environment variable.
			case len(parts) == 1 && isDir(last):
				// A package.
			case len(parts) == 1 && (last == "help" || last == "show" || last == "__complete" || last == "Objects" || last == "ObjectsCopy" ||
				last == "RunE" || last == "PersistentPreRunE"):
				// A command, the model's keys, cobra's fields.
			case !declared(last):
				t.Errorf("docs/architecture.md names %s, but no Go code declares %s", tok, last)
			}
		}
	}
	dirs, err := os.ReadDir("internal")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if d.IsDir() && !strings.Contains(string(doc), "`internal/"+d.Name()+"`") {
			t.Errorf("docs/architecture.md does not say what internal/%s is", d.Name())
		}
	}
}

func isDir(name string) bool {
	st, err := os.Stat(name)
	return err == nil && st.IsDir()
}
