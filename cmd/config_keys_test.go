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

// TestVariablesFollowKeys: a setting's variable is named from its key
// (prefix OBJGC_, '.' and '-' as '_', upper case), except for the shared
// settings whose variable configKeys names apart; the name every message,
// the man pages and docs/config.md give (settingOf) is that one. A run
// with the variable set, in the environment the run is given (not the
// process's), gets its value, and one with the file gets the file's.
func TestVariablesFollowKeys(t *testing.T) {
	streams := &IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }}
	root := newRootCmd(BuildInfo{}, streams)
	replacer := strings.NewReplacer(".", "_", "-", "_")
	for key, s := range knownKeys(root) {
		env, ok := flagEnv(s.cmd, s.flag.Name)
		if !ok {
			continue
		}
		if _, named := configKeys[s.flag.Name]; named {
			continue
		}
		if want := "OBJGC_" + strings.ToUpper(replacer.Replace(key)); env != want {
			t.Errorf("--%s of %s: variable %s, but the rule names %s for key %s", s.flag.Name, s.cmd.CommandPath(), env, want, key)
		}
	}
	file := filepath.Join(t.TempDir(), "objgc.yaml")
	if err := os.WriteFile(file, []byte("cache:\n  prune:\n    outdated: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"OBJGC_CACHE_PRUNE_KEEP": "4",
		"OBJGC_CONFIG":           file,
		"OBJGC_SYSTEM_CONFIG":    filepath.Join(t.TempDir(), "none.yaml"),
	}
	// The process's own variable must not reach the run.
	t.Setenv("OBJGC_CACHE_PRUNE_KEEP", "9")
	prune, _, err := root.Find([]string{"cache", "prune"})
	if err != nil {
		t.Fatal(err)
	}
	if err := prune.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := loadConfig(prune, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if got := prune.Flag("keep").Value.String(); got != "4" {
		t.Errorf("--keep from OBJGC_CACHE_PRUNE_KEEP=4: %s", got)
	}
	if got := prune.Flag("outdated").Value.String(); got != "true" {
		t.Errorf("--outdated from the file: %s", got)
	}
}
