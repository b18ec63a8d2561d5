// Package applytest holds the process tests of objgc that need more
// than a testscript script gives (docs/testing.md says which and why; the
// command line's other tests are testdata/script/*.txtar): apply under
// kills at chosen moments and signals at random instants, plan's peak
// memory, and loops over generated models (hostile ids in every field
// and format, the Markdown format's bounds). They build the real binary
// once and drive it with real model files, real hook scripts (POSIX sh),
// real signals and real flock(2). TestCrashResume runs longer with
// OBJGC_STRESS=1. It has no non-test code.
package applytest
