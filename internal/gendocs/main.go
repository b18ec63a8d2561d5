// Command gendocs writes objgc's man pages into docs/man. It runs from
// `go generate ./...` (see cmd/generate.go); the pages are committed so that
// packagers need no Go toolchain.
package main

import (
	"fmt"
	"os"

	"github.com/objgc/objgc/cmd"
)

func main() {
	dir := "docs/man"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := cmd.GenManPages(dir); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
