// Package earlysignal catches SIGINT and SIGTERM from the moment the
// program starts initializing its packages, before main runs.
//
// Until a program asks for a signal with signal.Notify, the Go runtime
// ends the process on SIGINT or SIGTERM by that signal (a shell reports
// 130 or 143, a CI job "terminated"). objgc promises exit status 130 for
// an interrupt at any instant, and the packages it links (cobra, viper,
// YAML and TOML readers, the TLS stack) take milliseconds to initialize
// before main. This package depends on os/signal alone, so that Go's
// initialization order (by import path, each package once its imports
// are done) reaches its init among the first packages of the program.
// What is left is the runtime's own start, before any Go code runs.
//
// The package is imported by package main only: a test binary that links
// the command line package does not lose its default SIGINT behaviour.
package earlysignal

import (
	"os"
	"os/signal"
	"syscall"
)

// Interrupts receives SIGINT and SIGTERM from program initialization on;
// it holds two, the first (drain) and the second (kill) that objgc acts
// on. Signals beyond those while nobody reads are dropped, not fatal.
var Interrupts = make(chan os.Signal, 2)

// SIGTERM first: with SIGINT ignored by the parent (a background job),
// SIGINT's handler appears (/proc/PID/status SigCgt) only once both are
// registered, which a test can watch for.
func init() { signal.Notify(Interrupts, syscall.SIGTERM, os.Interrupt) }

// Release gives SIGINT and SIGTERM back their default action: for a
// program (a test binary) that links package main but does not run
// objgc's command line.
func Release() { signal.Stop(Interrupts) }
