// Command objgc garbage-collects serialized object graphs in OpenStack
// Murano's object-model format. See README.md and docs/.
package main

import (
	"os"

	"github.com/objgc/objgc/cmd"
	"github.com/objgc/objgc/internal/earlysignal"
)

// Set by goreleaser through -ldflags "-X main.version=... -X main.commit=... -X main.date=...".
var version, commit, date string

func main() {
	os.Exit(cmd.Main(cmd.BuildInfo{Version: version, Commit: commit, Date: date}, earlysignal.Interrupts))
}
