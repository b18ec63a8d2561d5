// Package applytest holds the end-to-end tests of objgc apply: they build
// the real binary once and drive it with real model files, real hook
// scripts (POSIX sh), real signals and real flock(2). It has no non-test
// code.
package applytest
