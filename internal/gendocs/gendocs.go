// Package gendocs writes man pages for a cobra command tree: one page per
// command, made through cobra's Markdown generator and go-md2man, with
// sections the caller adds. It knows nothing of objgc's commands: the
// caller passes the root command and what goes into each page.
package gendocs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cpuguy83/go-md2man/v2/md2man"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// Pages says what ManPages puts into the pages of a command tree.
type Pages struct {
	// Source and Manual go into each page's .TH line; Source also
	// titles the extra sections' Markdown.
	Source, Manual string
	// Date is the date every page carries: the same commands and date
	// give the same bytes.
	Date time.Time
	// Long, when not nil, returns the DESCRIPTION of c, for help that
	// ends with text a page shows in a section of its own.
	Long func(c *cobra.Command) string
	// Sections, when not nil, returns the Markdown of the sections of
	// c's page that cobra does not write (EXIT STATUS, ENVIRONMENT,
	// FILES...), each starting with a "# NAME" heading. They go before
	// EXAMPLE, else before SEE ALSO, as man-pages(7) orders them.
	Sections func(c *cobra.Command) string
}

// ManPages writes one page per available command of root into dir
// (root.1, root-sub.1, ...). It changes the commands' help texts (it
// escapes them for Markdown), so root should be a tree built for it.
//
// Help texts are written for a terminal, where <placeholder> is plain
// text; the pages are made through Markdown, where it would be an HTML
// tag and vanish, so the text is escaped first.
func ManPages(root *cobra.Command, dir string, p Pages) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root.DisableAutoGenTag = true
	date := p.Date.UTC()
	escaped := map[*pflag.Flag]bool{}
	var gen func(c *cobra.Command) error
	gen = func(c *cobra.Command) error {
		if !c.IsAvailableCommand() && c != root {
			return nil
		}
		if p.Long != nil {
			c.Long = p.Long(c)
		}
		c.Long = EscapeMarkdown(c.Long)
		for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.InheritedFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if !escaped[f] {
					escaped[f] = true
					f.Usage = EscapeMarkdown(f.Usage)
				}
			})
		}
		var page bytes.Buffer
		// Each page is titled with its own name (OBJGC-PLAN for
		// objgc-plan.1), as man-pages(7) asks: the title is what a reader
		// sees in the header and what whatis and apropos index.
		name := strings.ReplaceAll(c.CommandPath(), " ", "-")
		header := &doc.GenManHeader{Title: strings.ToUpper(name), Section: "1", Source: p.Source, Manual: p.Manual, Date: &date}
		if err := doc.GenMan(c, header, &page); err != nil {
			return err
		}
		out := page.Bytes()
		if p.Sections != nil {
			// A title block first: go-md2man makes the first heading of
			// a document without one its .TH line.
			extra := md2man.Render([]byte("% " + p.Source + "\n" + p.Sections(c)))
			out = insertSections(out, extra)
		}
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

// EscapeMarkdown makes s come out of Markdown as it reads on a terminal:
// '<', '>' and '\' are escaped so that <placeholder> stays text.
func EscapeMarkdown(s string) string {
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

// Date returns the date man pages carry: SOURCE_DATE_EPOCH (seconds
// since the Unix epoch, the reproducible-builds.org convention) when it is
// set, else commitTime, the time of the commit the pages are made from.
// The error names the variable when its value is not a number.
func Date(getenv func(string) string, commitTime func() (time.Time, error)) (time.Time, error) {
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

// HeadCommitTime is the committer time of the git commit checked out in
// the working directory.
func HeadCommitTime() (time.Time, error) {
	out, err := exec.Command("git", "log", "-1", "--format=%ct").Output()
	if err != nil {
		return time.Time{}, fmt.Errorf("git log: %w", err)
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("git log printed %q, not a time", out)
	}
	return time.Unix(sec, 0), nil
}

// PageDate returns the month and year on the .TH line of a man page that
// ManPages wrote for a command tree whose root is named name (upper
// case on the line, as go-md2man writes it): the date the page carries.
func PageDate(page []byte, name string) (time.Time, error) {
	th := regexp.MustCompile(`(?m)^\.TH "` + regexp.QuoteMeta(strings.ToUpper(name)) + `" "1" "([A-Z][a-z]{2} \d{4})"`)
	m := th.FindSubmatch(page)
	if m == nil {
		return time.Time{}, fmt.Errorf("no .TH line with a date for %s", name)
	}
	return time.Parse("Jan 2006", string(m[1]))
}
