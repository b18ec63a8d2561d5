package cmd

//go:generate go run ../tools/gendocs ../docs/man

import (
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ManEntry is one entry of a man page section: a term (an exit code, a
// variable, a path) and what it means, both plain text.
type ManEntry struct {
	Term, Text string
}

// ManSection is a section of a man page that cobra's help does not
// give: EXIT STATUS, ENVIRONMENT, FILES.
type ManSection struct {
	Title   string
	Entries []ManEntry
}

// ManTree returns objgc's command tree, built for writing its man pages
// (tools/gendocs, which may change its help texts): one page per
// available command.
func ManTree() *cobra.Command {
	streams := &IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: os.Getenv}
	return newRootCmd(BuildInfo{}, streams)
}

// ManDescription returns the DESCRIPTION of c's page: its long help
// without the EXIT STATUS paragraph that ends it, which is a section of
// the page (ManSections).
func ManDescription(c *cobra.Command) string {
	return strings.TrimSuffix(c.Long, "\n\n"+exitStatusHelp)
}

// ManSections returns the EXIT STATUS, ENVIRONMENT and FILES sections of
// c's page, in that order. FILES gives the files the .deb and .rpm
// install (packaging/, .goreleaser.yml; a test compares them) where c
// reads them.
func ManSections(c *cobra.Command) []ManSection {
	exit := ManSection{Title: "EXIT STATUS"}
	for _, s := range exitStatuses {
		exit.Entries = append(exit.Entries, ManEntry{strconv.Itoa(s.code), s.meaning})
	}

	env := ManSection{Title: "ENVIRONMENT"}
	seen := map[string]bool{}
	for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.InheritedFlags()} {
		fs.VisitAll(func(f *pflag.Flag) {
			name, ok := flagEnv(c, f.Name)
			if !ok || seen[name] || f.Hidden {
				return
			}
			seen[name] = true
			env.Entries = append(env.Entries, ManEntry{name, "the value of --" + f.Name + " when the flag is not given"})
		})
	}
	env.Entries = append(env.Entries,
		ManEntry{systemConfigEnv, "the system's configuration file instead of " + systemConfigPath},
		ManEntry{"NO_COLOR", "when set (to anything), no colour in the output"},
		ManEntry{"TERM", "dumb means a terminal without colour"},
	)

	path := c.CommandPath()
	files := ManSection{Title: "FILES"}
	add := func(term, text string) { files.Entries = append(files.Entries, ManEntry{term, text}) }
	add("./objgc.yaml, $XDG_CONFIG_HOME/objgc/config.yaml",
		"your configuration file when --config is not given: the first one that exists (on macOS the second is under ~/Library/Application Support). It must belong to you or root and not be writable by its group or others; --force, --write, --out, --junit, --snapshot and --graph are flags only (docs/config.md)")
	add(systemConfigPath,
		"the system's configuration file, read by every user below their own, key by key; the package installs one that names "+defaultMuranoConfig+" (passed over where that file does not exist); "+systemConfigPath+".example shows every key")
	planOrApply := path == "objgc" || strings.HasPrefix(path, "objgc plan") || strings.HasPrefix(path, "objgc apply")
	if planOrApply {
		add("/etc/objgc/hooks/", "the hooks dir the package installs, empty: hooks are looked for there when --hooks-dir or hooks.dirs names it (docs/hooks.md)")
	}
	if path == "objgc" || strings.HasPrefix(path, "objgc apply") {
		add("TARGET.lock", "apply's lock beside the model it writes (TARGET); it names the process holding it and is never deleted")
		add("TARGET.journal", "apply's journal of the steps done, removed once the model is written; a run that finds it resumes")
	}
	if cmdReadsCache(path) {
		add(defaultMuranoConfig+", /etc/murano/murano.conf.d/*.conf",
			"murano-engine's configuration: with --murano-config (the system's configuration file names it), the package cache is the directory of its [engine] packages_cache, read as the engine reads it (docs/config.md)")
		add("$XDG_CACHE_HOME/objgc/",
			"the package cache when neither --cache-dir nor --murano-config names one. A cache has murano-engine's layout: FULLNAME/VERSION/ID/ holds one unpacked package, ID_usage.lock and ID_download.lock beside them are the engine's locks, .objgc/ is objgc's own (docs/cache.md)")
	}
	if path == "objgc" || path == "objgc cache" || path == "objgc cache prune" {
		add("/usr/lib/systemd/system/objgc-prune.service, /usr/lib/systemd/system/objgc-prune.timer",
			"the daily prune of murano-engine's cache the package installs, as the engine's user, murano; the timer is not enabled (systemctl enable --now objgc-prune.timer)")
		add("/etc/default/objgc", "the daily prune's policy (PRUNE_POLICY) and murano.conf's path (MURANO_CONFIG)")
	}
	return []ManSection{exit, env, files}
}

// cmdReadsCache reports whether the command at path reads the package
// cache: all but version and completion.
func cmdReadsCache(path string) bool {
	return path != "objgc version" && !strings.HasPrefix(path, "objgc completion")
}
