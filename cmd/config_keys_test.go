package cmd

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSuggestKey: the suggestion for an unknown key of a configuration
// file is the key a user most likely meant (for a flag several commands
// have, the key of each), and none when nothing is close (a far-fetched
// one would mislead).
func TestSuggestKey(t *testing.T) {
	streams := &IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }}
	known := knownKeys(newRootCmd(BuildInfo{}, streams))
	formats := []string{"apply.format", "cache.add.format", "cache.list.format", "cache.migrate.format", "cache.path.format", "cache.prune.format", "cache.rm.format", "cache.verify.format", "plan.format", "show.format", "version.format"}
	for key, want := range map[string][]string{
		"format":        formats,
		"fromat":        formats,
		"plan.fromat":   {"plan.format"},
		"hooks-dir":     {"hooks.dirs"},
		"cache-dir":     {"cache.dir"},
		"hooks.dir":     {"hooks.dirs"},
		"hooks":         {"hooks.dirs"},
		"cache":         {"cache.dir"},
		"paralelism":    {"apply.parallelism"},
		"parallelism":   {"apply.parallelism"},
		"hook-timout":   {"apply.hook-timeout"},
		"keep":          {"cache.prune.keep"},
		"help":          nil,
		"colour-scheme": nil,
		"forc":          nil, // flag only: never suggested for a file
		"x":             nil,
	} {
		if got := suggestKey(key, known); !slices.Equal(got, want) {
			t.Errorf("suggestKey(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestConfigKeysDocumented: docs/config.md, the one page for
// configuration, names every key a configuration file may hold (flag-only
// flags have none), and the variable of each shared setting; the other
// variables follow one rule from the key, which the page states.
func TestConfigKeysDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	streams := &IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }}
	root := newRootCmd(BuildInfo{}, streams)
	for key, s := range knownKeys(root) {
		if flagOnly[s.flag.Name] || notInFile[s.flag.Name] {
			continue
		}
		if !strings.Contains(string(doc), "`"+key+"`") {
			t.Errorf("docs/config.md does not name the key `%s` (--%s of %s)", key, s.flag.Name, s.cmd.CommandPath())
		}
		if env, ok := flagEnv(s.cmd, s.flag.Name); ok && sharedSettings[s.flag.Name] && !strings.Contains(string(doc), env) {
			t.Errorf("docs/config.md does not name the variable %s (--%s of %s)", env, s.flag.Name, s.cmd.CommandPath())
		}
	}
}
