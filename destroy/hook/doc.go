// Package hook finds and runs the destroy and notify hooks of objgc
// (docs/design.md, "Hooks").
//
// A hook is an executable file named after a class: <dir>/<C>/destroy runs
// when an object of class C (or of a class derived from C) is destroyed,
// <dir>/<C>/notify/<H> when a subscriber of class C is notified through
// its handler H. [FindSources] and [FindHandlerSources] look for them in
// the hooks dirs and in the packages of the package cache ([Sources]), in
// the order they run. [Run] runs one ([Invocation]): argv, OBJGC_*
// environment and a [Document] on stdin, in its own process group,
// killed (SIGTERM, then SIGKILL after the grace period) on timeout or
// cancellation; its stdout is one JSON object, which for a notification
// may carry an RFC 7386 merge patch for the subscriber. A hook that fails
// returns a [*HookError].
//
// The package checks only the shape of a hook's stdout (one JSON object;
// a "patch" member, from a notify hook only, that is an object or null);
// whether a patch may apply to the model is the write-back's
// decision (package writeback, docs/writeback.md).
package hook
