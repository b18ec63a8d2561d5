package cmd

import (
	"io"
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
	formats := []string{"apply.format", "cache.add.format", "cache.list.format", "cache.path.format", "cache.prune.format", "cache.verify.format", "plan.format", "version.format"}
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
