// Command gendocs writes objgc's man pages into docs/man. It runs from
// `go generate ./cmd` (see cmd/generate.go); the pages are committed so
// that packagers need no Go toolchain. The pages are dated
// SOURCE_DATE_EPOCH when it is set, else the time of the commit checked
// out (git log -1).
package main

import (
	"fmt"
	"os"

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
		err = cmd.GenManPages(dir, date)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
