package cmd

//go:generate go run ../internal/gendocs ../docs/man

import (
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra/doc"
)

// GenManPages writes one man page per command into dir, dated at the Unix
// epoch unless SOURCE_DATE_EPOCH says otherwise, so that the output is
// reproducible.
func GenManPages(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	streams := &IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: os.Getenv}
	root := newRootCmd(BuildInfo{}, streams)
	root.DisableAutoGenTag = true
	date := time.Unix(0, 0).UTC()
	header := &doc.GenManHeader{Title: "OBJGC", Section: "1", Source: "objgc", Manual: "objgc manual", Date: &date}
	return doc.GenManTree(root, header, dir)
}
