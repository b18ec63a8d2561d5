// Package snapshot reads OpenStack Murano object models into an index of
// their objects.
//
// A model is JSON. An object is a JSON object whose "?" value is a JSON
// object (the header); its other keys are properties. Ownership is nesting:
// an object's owner is the nearest enclosing object, plain JSON objects and
// arrays in between are transparent. A reference is a bare string equal to
// some object's id. The same id may appear several times as full copies: the
// first copy in document order is the object. These rules, and the input
// forms (Murano's envelope {"Objects", "ObjectsCopy", "Attributes"}, an
// engine task {"model": envelope}, a bare object tree), are those of
// Murano's engine (murano/dsl/object_store.py), described in
// docs/design.md, "The object model".
//
// The reader makes one pass over the bytes and keeps them: every object,
// header and reference is a byte span of the input, so that a model can be
// written back with untouched bytes unchanged. It is built for models of a
// million objects: no allocation per JSON value, ids and type strings are
// views of the input, paths are rendered only when asked for.
//
// A model file of 1 MiB or more is mapped read-only rather than read, on
// Linux (ReadDocument): the package releases its pages from the resident
// set as its loops read them, and Document.Close unmaps it, after which
// nothing read from the document but the trees' ids may be used. A file
// truncated under its mapping makes a read of it fault: the loaders
// return a *ChangedError naming it, and a goroutine that reads a
// document's bytes itself (Data, the strings a Tree returns) defers
// Protect to get the same error instead of a crash.
package snapshot
