// Command gendocs writes objgc's man pages into docs/man. It runs from
// `go generate ./cmd` (see cmd/generate.go); the pages are committed so
// that packagers need no Go toolchain. The pages are dated
// SOURCE_DATE_EPOCH when it is set, else the time of the commit checked
// out (git log -1). The man page generator (cobra/doc, go-md2man) is
// linked here, not into objgc.
package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/objgc/objgc/cmd"
	"github.com/objgc/objgc/internal/gendocs"
)

func main() {
	dir := "docs/man"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	date, err := gendocs.Date(os.Getenv, gendocs.HeadCommitTime)
	if err == nil {
		err = writeManPages(dir, date)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

// writeManPages writes one man page per objgc command into dir (objgc.1,
// objgc-plan.1, ...), dated date: the same commands and date give the
// same bytes. Each page has the sections NAME, SYNOPSIS, DESCRIPTION,
// OPTIONS, EXIT STATUS, ENVIRONMENT, FILES, EXAMPLE (where the command
// has one) and SEE ALSO.
func writeManPages(dir string, date time.Time) error {
	return gendocs.ManPages(cmd.ManTree(), dir, gendocs.Pages{
		Source: "objgc", Manual: "objgc manual", Date: date,
		Long:     cmd.ManDescription,
		Sections: sectionsMarkdown,
	})
}

// sectionsMarkdown writes cmd.ManSections of c as Markdown: a heading
// per section, a definition per entry, the term in bold.
func sectionsMarkdown(c *cobra.Command) string {
	var b strings.Builder
	for _, s := range cmd.ManSections(c) {
		fmt.Fprintf(&b, "# %s\n", s.Title)
		for _, e := range s.Entries {
			fmt.Fprintf(&b, "**%s**\n: %s\n\n", gendocs.EscapeMarkdown(e.Term), gendocs.EscapeMarkdown(e.Text))
		}
	}
	return b.String()
}
