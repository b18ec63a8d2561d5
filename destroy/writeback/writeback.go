// Package writeback decides and writes the model `objgc apply` writes
// back (docs/writeback.md): the incoming model with the handlers' patches
// applied and the destroyed objects flagged or left out (Objects), the
// same with the objects that still exist in the world put back
// (ObjectsCopy), and the attributes of the objects left. Build decides
// and returns every error before anything is written; Model.WriteTo
// streams the envelope from the input's bytes. PatchChecker holds the
// same patch rules for apply, which checks each patch as its hook ends.
package writeback

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/diff"
	"github.com/objgc/objgc/internal/jsonedit"
	"github.com/objgc/objgc/snapshot"
)

// Effects says what an apply run did to the doomed objects of a plan:
// the input of Build.
type Effects struct {
	// Destroyed holds, per Plan.Objects, whether the object is destroyed:
	// every destroy hook succeeded, or --force marked a failed object
	// destroyed. False means failed, blocked or not reached: the object
	// still exists in the world.
	Destroyed []bool
	// Patches are the JSON Merge Patches (RFC 7386) the notify hooks
	// returned, per subscriber id, in the order the hooks ran.
	Patches map[string][]json.RawMessage
}

// retainedKey is the property under which the write-back keeps a failed or
// blocked object whose snapshot place is gone from the output (see
// docs/writeback.md): an array of objects, on the nearest owner that is
// still in the model, else on the root.
const retainedKey = "objgcRetained"

// Build decides the model `objgc apply` writes back
// (docs/design.md, "Write-back"; docs/writeback.md); Model.WriteTo
// writes it as the envelope
//
//	{
//	  "Objects": <objects>,
//	  "ObjectsCopy": <objects copy>,
//	  "Attributes": <attributes>
//	}
//
// followed by a newline: two spaces before each key, the values' bytes as
// described below, unindented.
//
//   - Objects is the incoming model's bytes with the handlers' patches
//     applied to their subscribers, the objects of p.Diff.Dropped removed,
//     and every destroyed object that is still referenced written once, in
//     full (its snapshot bytes, "destroyed": true in its header), at its
//     first reference in document order; its other references stay bare
//     ids.
//   - ObjectsCopy is Objects plus every doomed object that is not
//     destroyed, put back at its snapshot place (same owner, same property
//     path below it) or, when that place is gone, in the retainedKey array
//     of its nearest owner still present (else of the root).
//   - Attributes is attributes (Murano's rows [objectId, typeName, key, value]) less
//     the rows of destroyed objects; missing or null: [].
//
// out.Destroyed must have one entry per p.Objects. A patch must be a JSON
// object and may not set the "?" header at any level where it merges into
// an existing object. Patches for a subscriber that is doomed are not
// applied: the subscriber leaves the model. Unless onDanglingKeep
// (--on-dangling=keep), a dangling reference in the incoming model is an
// error, since apply refuses to run on such a model. Every error is
// returned here, before anything is written; WriteTo returns only the
// writer's.
//
// Memory: the values are written from the model's bytes as WriteTo goes,
// the incoming model read from start to end for each of Objects and
// ObjectsCopy, never copied whole. What Build holds until then is
// small: the edits (offsets), the patched bytes of each patched
// subscriber under proxyMin (a larger one only the members its patches
// name, see proxySub), and, when a doomed object is not destroyed
// (failed, blocked, not reached), the places ObjectsCopy puts it back,
// found in the model's bytes after a pass over Objects that writes
// nothing. Where those places are not in bytes copied from the model
// (errNotStreamed), Objects is built in memory and indexed once more, as
// before (docs/writeback.md, "Memory").
func Build(p *order.Plan, out Effects, attributes json.RawMessage, onDanglingKeep bool) (*Model, error) {
	if len(out.Destroyed) != len(p.Objects) {
		return nil, fmt.Errorf("write-back: %d destroyed flags for %d doomed objects", len(out.Destroyed), len(p.Objects))
	}
	d := p.Diff
	if !onDanglingKeep && len(d.Dangling) > 0 {
		r := d.Dangling[0]
		referrer := r.ReferrerID
		if referrer == "" {
			referrer = "the model"
		}
		return nil, fmt.Errorf("write-back: %s references doomed object %s at %s (%d dangling references in all); only --on-dangling=keep writes such a model",
			referrer, r.DoomedID, r.Path, len(d.Dangling))
	}
	wb := newWriteBack(p, out.Destroyed)
	objects, err := wb.objects(out.Patches)
	if err != nil {
		return nil, err
	}
	attrs, err := wb.attributes(attributes, out.Destroyed)
	if err != nil {
		return nil, err
	}
	m := &Model{objects: objects, objectsCopy: objects, attributes: attrs}
	some := false
	for _, pl := range p.Objects {
		some = some || wb.retained[pl.Snapshot]
	}
	if some {
		m.objectsCopy, err = wb.objectsCopyStreamed()
		if errors.Is(err, errNotStreamed) {
			var b bytes.Buffer
			if err := objects(&b); err != nil {
				return nil, err
			}
			built := b.Bytes()
			m.objects = func(w jsonedit.Writer) error { _, err := w.Write(built); return err }
			m.objectsCopy, err = wb.objectsCopy(built)
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

func newWriteBack(p *order.Plan, destroyed []bool) *writeBack {
	d := p.Diff
	wb := &writeBack{p: p, d: d, snap: d.Snapshot, in: d.Incoming,
		destroyed: make([]bool, len(d.Snapshot.Objects)), retained: make([]bool, len(d.Snapshot.Objects))}
	for k, pl := range p.Objects {
		if destroyed[k] {
			wb.destroyed[pl.Snapshot] = true
		} else {
			wb.retained[pl.Snapshot] = true
		}
	}
	return wb
}

type writeBack struct {
	p        *order.Plan
	d        *diff.Result
	snap, in *snapshot.Tree
	// destroyed and retained are by snapshot object index (first copies
	// of doomed objects): destroyed in this run, or still in the world.
	destroyed, retained []bool

	refs     []snapRef // references in the snapshot to destroyed objects
	refsDone bool

	gen *objectsGen // nil when Objects is null
}

// snapRef is a reference in the snapshot (or in a patched copy) to an
// object destroyed in this run.
type snapRef struct {
	off    int
	object int32
}

func (wb *writeBack) isDestroyed(i int32) bool { return wb.d.IsDoomed(i) && wb.destroyed[i] }

// patchedSub is a copy of a subscriber with its patches applied (and the
// objects of Dropped inside it removed), and, when Objects' writer writes
// it from these bytes, the references in it to objects destroyed in this
// run, by offset in data.
type patchedSub struct {
	data []byte
	refs []snapRef
	// base is where data stands in the offsets of streamView: after the
	// incoming document and the patched copies before it.
	base int
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
