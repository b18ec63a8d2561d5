package cmd

//go:generate go run ../tools/gendocs ../docs/man

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/objgc/objgc/internal/gendocs"
)

// GenManPages writes one man page per command into dir (objgc.1,
// objgc-plan.1, ...), dated date: the same commands and date give the same
// bytes. Each page has the sections NAME, SYNOPSIS, DESCRIPTION, OPTIONS,
// EXIT STATUS, ENVIRONMENT, FILES, EXAMPLE (where the command has one) and
// SEE ALSO. The EXIT STATUS paragraph that ends each command's help is
// its own section on a page.
func GenManPages(dir string, date time.Time) error {
	streams := &IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: os.Getenv}
	return gendocs.ManPages(newRootCmd(BuildInfo{}, streams), dir, gendocs.Pages{
		Source: "objgc", Manual: "objgc manual", Date: date,
		Long:     func(c *cobra.Command) string { return strings.TrimSuffix(c.Long, "\n\n"+exitStatusHelp) },
		Sections: manSections,
	})
}

// manSections returns the Markdown of the EXIT STATUS, ENVIRONMENT and
// FILES sections of c's page.
func manSections(c *cobra.Command) string {
	var b strings.Builder
	b.WriteString("# EXIT STATUS\n")
	for _, s := range exitStatuses {
		fmt.Fprintf(&b, "**%d**\n: %s\n\n", s.code, gendocs.EscapeMarkdown(s.meaning))
	}

	b.WriteString("# ENVIRONMENT\n")
	seen := map[string]bool{}
	for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.InheritedFlags()} {
		fs.VisitAll(func(f *pflag.Flag) {
			env, ok := flagEnv(c, f.Name)
			if !ok || seen[env] || f.Hidden {
				return
			}
			seen[env] = true
			fmt.Fprintf(&b, "**%s**\n: the value of **--%s** when the flag is not given\n\n", env, f.Name)
		})
	}
	b.WriteString("**NO_COLOR**\n: when set (to anything), no colour in the output\n\n")
	b.WriteString("**TERM**\n: **dumb** means a terminal without colour\n\n")

	b.WriteString("# FILES\n")
	b.WriteString("**./objgc.yaml**, **$XDG_CONFIG_HOME/objgc/config.yaml**\n: the configuration file read when **--config** is not given: the first one that exists (on macOS the second is under ~/Library/Application Support). It must belong to you or root and not be writable by its group or others; **--force**, **--write**, **--out**, **--snapshot** and **--graph** are flags only (docs/config.md)\n\n")
	path := c.CommandPath()
	if path == "objgc" || strings.HasPrefix(path, "objgc apply") {
		b.WriteString("**TARGET.lock**\n: apply's lock beside the model it writes (TARGET); it names the process holding it and is never deleted\n\n")
		b.WriteString("**TARGET.journal**\n: apply's journal of the steps done, removed once the model is written; a run that finds it resumes\n\n")
	}
	if path != "objgc version" && path != "objgc completion" {
		b.WriteString("**$XDG_CACHE_HOME/objgc/**\n: the package cache (**--cache-dir**): packages/FULLNAME/VERSION@ID/ holds one unpacked package, locks/ the usage and download locks, tmp/ the staging area\n\n")
	}
	return b.String()
}
