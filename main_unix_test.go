//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdMkfifo makes a named pipe: mkfifo PATH.
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkfifo PATH")
	}
	ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o644))
}

// cmdUnwritable makes a folder in which the user running the script
// cannot create files: unwritable DIR. It is made writable again when the
// script ends. Guard it with [unwritable].
func cmdUnwritable(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: unwritable DIR")
	}
	dir := ts.MkAbs(args[0])
	undo, err := makeUnwritable(dir)
	ts.Check(err)
	ts.Defer(undo)
	if f, err := os.CreateTemp(dir, "probe-*"); err == nil {
		f.Close()
		os.Remove(f.Name())
		ts.Fatalf("unwritable: %s is still writable", dir)
	}
}

// makeUnwritable takes the write bits off dir and, for root (whom the
// bits do not stop), sets the immutable attribute where the system has
// one. undo restores both.
func makeUnwritable(dir string) (undo func(), err error) {
	if err := os.Chmod(dir, 0o555); err != nil {
		return nil, err
	}
	undo = func() { os.Chmod(dir, 0o755) }
	if os.Geteuid() == 0 {
		if err := setImmutable(dir, true); err != nil {
			undo()
			return nil, err
		}
		chmodBack := undo
		undo = func() { setImmutable(dir, false); chmodBack() }
	}
	return undo, nil
}

// canMakeUnwritable is the [unwritable] condition: whether a folder in the
// temporary directory can be made unwritable for the user running the
// tests.
func canMakeUnwritable() bool {
	base, err := os.MkdirTemp("", "objgc-unwritable-*")
	if err != nil {
		return false
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return false
	}
	undo, err := makeUnwritable(dir)
	if err != nil {
		return false
	}
	defer undo()
	f, err := os.CreateTemp(dir, "probe-*")
	if err == nil {
		f.Close()
		os.Remove(f.Name())
		return false
	}
	return true
}

// fixUmask makes the files the scripts create (mode 0666 less the umask)
// independent of the umask of whoever runs the tests: a configuration
// file writable by the group is refused.
func fixUmask() { syscall.Umask(0o022) }
