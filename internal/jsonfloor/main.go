// Command jsonfloor is the floor objgc plan's speed is compared with: the
// least any planner must do with a model, reading its bytes and checking
// that they are JSON, timed as a process the way objgc itself is.
//
//	go run ./internal/jsonfloor valid MODEL
//
// Modes:
//
//	read   read each file into memory
//	valid  read each file, then validate it with gjson.ValidBytes
//
// It prints one line a file (its size, and whether it is valid) and exits
// 1 when a file cannot be read or is not valid JSON.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/tidwall/gjson"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: jsonfloor read|valid FILE...")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1], os.Args[2:], os.Stdout, os.Stderr))
}

// run does mode on each file and returns the exit status: 0, 1 when a file
// cannot be read or is not valid JSON, 2 for an unknown mode.
func run(mode string, names []string, stdout, stderr io.Writer) int {
	if mode != "read" && mode != "valid" {
		fmt.Fprintf(stderr, "jsonfloor: mode %q: want read or valid\n", mode)
		return 2
	}
	status := 0
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintln(stderr, "jsonfloor:", err)
			status = 1
			continue
		}
		if mode == "read" {
			fmt.Fprintf(stdout, "%s: %d bytes read\n", name, len(data))
			continue
		}
		if !gjson.ValidBytes(data) {
			fmt.Fprintf(stderr, "jsonfloor: %s: not valid JSON\n", name)
			status = 1
			continue
		}
		fmt.Fprintf(stdout, "%s: %d bytes, valid JSON\n", name, len(data))
	}
	return status
}
