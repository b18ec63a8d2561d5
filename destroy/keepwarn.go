package destroy

import (
	"github.com/objgc/objgc/destroy/order"
)

// EngineCannotLoadKept says why a model written with --on-dangling=keep
// does not load in Murano 14's engine (docs/writeback.md, "What
// Murano's engine reads back"): its loader, InitializationObjectStore.load
// (murano/dsl/object_store.py), marks an object whose header says
// "destroyed": true destroyed before it initializes it, which clears its
// properties, and MuranoObject.set_property (murano/dsl/murano_object.py)
// then fails with TypeError; a bare id in its place fails with
// NoObjectFoundError (contracts' Class.transform).
const EngineCannotLoadKept = "Murano 14's engine cannot load that model (executor.load: TypeError in MuranoObject.set_property); " +
	"restore the object or remove the references before the next deployment"

// KeepWarnings returns, for --on-dangling=keep, one WarnEngineCannotLoad
// warning per doomed object that a dangling reference of p keeps in the
// model apply writes (flagged destroyed, docs/writeback.md), in the
// document order of its first reference, naming the object and its path
// in the snapshot; nil when p has no dangling reference.
func KeepWarnings(p *order.Plan) []order.Warning {
	d := p.Diff
	var out []order.Warning
	seen := map[int32]bool{}
	for _, r := range d.Dangling {
		if seen[r.Doomed] {
			continue
		}
		seen[r.Doomed] = true
		out = append(out, order.Warning{
			Code:    order.WarnEngineCannotLoad,
			ID:      r.DoomedID,
			Path:    d.Snapshot.ObjectPath(r.Doomed),
			Message: r.DoomedID + " is kept in the written model flagged destroyed: " + EngineCannotLoadKept,
		})
	}
	return out
}
