// Package applytest holds the end-to-end tests of objgc apply that need
// more control than a testscript script gives (docs/testing.md says which
// and why; the others are testdata/script/apply_e2e_*.txtar): they build
// the real binary once and drive it with real model files, real hook
// scripts (POSIX sh), real signals and real flock(2). TestCrashResume
// runs longer with OBJGC_STRESS=1. It has no non-test code.
package applytest
