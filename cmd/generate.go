package cmd

//go:generate go run ../internal/gendocs ../docs/man

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cpuguy83/go-md2man/v2/md2man"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// ManDate returns the date man pages carry: SOURCE_DATE_EPOCH (seconds
// since the Unix epoch, the reproducible-builds.org convention) when it is
// set, else commitTime, the time of the commit the pages are made from.
// The error names the variable when its value is not a number.
func ManDate(getenv func(string) string, commitTime func() (time.Time, error)) (time.Time, error) {
	if s := getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: not a number of seconds", s)
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	t, err := commitTime()
	if err != nil {
		return time.Time{}, fmt.Errorf("no date for the man pages: %w (set SOURCE_DATE_EPOCH)", err)
	}
	return t.UTC(), nil
}

// GenManPages writes one man page per command into dir (objgc.1,
// objgc-plan.1, ...), dated date: the same commands and date give the same
// bytes. Each page has the sections NAME, SYNOPSIS, DESCRIPTION, OPTIONS,
// EXIT STATUS, ENVIRONMENT, FILES, EXAMPLE (where the command has one) and
// SEE ALSO.
//
// The help texts are written for a terminal, where <placeholder> is plain
// text; the pages are made through Markdown (cobra's generator and
// go-md2man), where it would be an HTML tag and vanish, so the text is
// escaped first.
func GenManPages(dir string, date time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	streams := &IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: os.Getenv}
	root := newRootCmd(BuildInfo{}, streams)
	root.DisableAutoGenTag = true
	date = date.UTC()
	escaped := map[*pflag.Flag]bool{}
	var gen func(c *cobra.Command) error
	gen = func(c *cobra.Command) error {
		if !c.IsAvailableCommand() && c != root {
			return nil
		}
		c.Long = escapeMarkdown(strings.TrimSuffix(c.Long, "\n\n"+exitStatusHelp))
		for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.InheritedFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if !escaped[f] {
					escaped[f] = true
					f.Usage = escapeMarkdown(f.Usage)
				}
			})
		}
		var page bytes.Buffer
		// Each page is titled with its own name (OBJGC-PLAN for
		// objgc-plan.1), as man-pages(7) asks: the title is what a reader
		// sees in the header and what whatis and apropos index.
		name := strings.ReplaceAll(c.CommandPath(), " ", "-")
		header := &doc.GenManHeader{Title: strings.ToUpper(name), Section: "1", Source: "objgc", Manual: "objgc manual", Date: &date}
		if err := doc.GenMan(c, header, &page); err != nil {
			return err
		}
		// A title block first: go-md2man makes the first heading of a
		// document without one its .TH line.
		extra := md2man.Render([]byte("% objgc\n" + manSections(c)))
		out := insertSections(page.Bytes(), extra)
		if err := os.WriteFile(filepath.Join(dir, name+".1"), out, 0o644); err != nil {
			return err
		}
		for _, sub := range c.Commands() {
			if err := gen(sub); err != nil {
				return err
			}
		}
		return nil
	}
	return gen(root)
}

// escapeMarkdown makes s come out of Markdown as it reads on a terminal:
// '<', '>' and '\' are escaped so that <placeholder> stays text.
func escapeMarkdown(s string) string {
	return strings.NewReplacer(`\`, `\\`, "<", `\<`, ">", `\>`).Replace(s)
}

// insertSections puts the roff of extra (sections rendered on their own)
// before the page's EXAMPLE section, else before SEE ALSO, else at the
// end: man-pages(7) orders EXIT STATUS, ENVIRONMENT and FILES after
// OPTIONS and before EXAMPLES and SEE ALSO.
func insertSections(page, extra []byte) []byte {
	// md2man starts every rendering with its own preamble (.nh, .TH):
	// keep only the sections.
	if k := bytes.Index(extra, []byte(".SH ")); k >= 0 {
		extra = extra[k:]
	}
	at := len(page)
	for _, sh := range []string{"\n.SH EXAMPLE\n", "\n.SH SEE ALSO\n"} {
		if k := bytes.Index(page, []byte(sh)); k >= 0 {
			at = k + 1
			break
		}
	}
	out := make([]byte, 0, len(page)+len(extra)+1)
	out = append(out, page[:at]...)
	out = append(out, extra...)
	if len(extra) > 0 && extra[len(extra)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, page[at:]...)
}

// manSections returns the Markdown of the EXIT STATUS, ENVIRONMENT and
// FILES sections of c's page.
func manSections(c *cobra.Command) string {
	var b strings.Builder
	b.WriteString("# EXIT STATUS\n")
	for _, s := range exitStatuses {
		fmt.Fprintf(&b, "**%d**\n: %s\n\n", s.code, escapeMarkdown(s.meaning))
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
