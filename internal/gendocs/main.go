// Command gendocs writes objgc's man pages into docs/man. It runs from
// `go generate ./...` (see cmd/generate.go); the pages are committed so that
// packagers need no Go toolchain. The pages are dated SOURCE_DATE_EPOCH when
// it is set, else the time of the commit checked out (git log -1).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/objgc/objgc/cmd"
)

func main() {
	dir := "docs/man"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	date, err := cmd.ManDate(os.Getenv, headCommitTime)
	if err == nil {
		err = cmd.GenManPages(dir, date)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

// headCommitTime is the committer time of HEAD.
func headCommitTime() (time.Time, error) {
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
