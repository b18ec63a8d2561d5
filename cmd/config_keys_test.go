package cmd

import (
	"io"
	"strings"
	"testing"
)

// TestSuggestKey: the suggestion for an unknown key of a configuration
// file is the key a user most likely meant, and none when nothing is
// close (a far-fetched one would mislead).
func TestSuggestKey(t *testing.T) {
	streams := &IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }}
	known := knownKeys(newRootCmd(BuildInfo{}, streams))
	for key, want := range map[string]string{
		"fromat":        "format",
		"formt":         "format",
		"hooks-dir":     "hooks.dirs",
		"cache-dir":     "cache.dir",
		"hooks.dir":     "hooks.dirs",
		"cache":         "cache.dir",
		"paralelism":    "parallelism",
		"hook-timout":   "hook-timeout",
		"help":          "",
		"colour-scheme": "",
		"forc":          "", // flag only: never suggested for a file
		"x":             "",
	} {
		if got := suggestKey(key, known); got != want {
			t.Errorf("suggestKey(%q) = %q, want %q", key, got, want)
		}
	}
}
