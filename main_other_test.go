//go:build !unix

package main

import "github.com/rogpeppe/go-internal/testscript"

func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("mkfifo: no named pipes on this system")
}

func cmdUnwritable(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("unwritable: not supported on this system")
}

func canMakeUnwritable() bool { return false }

func fixUmask() {}
