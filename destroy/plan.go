package destroy

import (
	"context"
	"fmt"
	"strings"

	"github.com/objgc/objgc/diff"
	"github.com/objgc/objgc/snapshot"
)

// ReasonCode says why an object sits in its group (DESIGN.md section 6).
// The codes are stable: scripts may match them.
type ReasonCode string

// Reason codes.
const (
	ReasonOwnedBy       ReasonCode = "owned_by"       // its owner, doomed too, is destroyed after it
	ReasonSubscriber    ReasonCode = "subscriber"     // ID subscribes to its destruction and is destroyed after it
	ReasonCycle         ReasonCode = "cycle"          // ID's dependency on it was ignored to break a cycle
	ReasonOwnerSurvives ReasonCode = "owner_survives" // its owner ID stays in the model
	ReasonTopLevel      ReasonCode = "top_level"      // it has no owner
)

// WarnCode names the kind of a plan warning. The codes are stable:
// scripts may match them.
type WarnCode string

// Warning codes.
const (
	WarnDangling          WarnCode = "dangling_reference"
	WarnCycle             WarnCode = "cycle"
	WarnIDless            WarnCode = "idless_object"
	WarnDuplicateDiffers  WarnCode = "duplicate_differs"
	WarnTypeChanged       WarnCode = "type_changed"
	WarnSubscriberMissing WarnCode = "subscriber_missing"
	// WarnEnvironmentDestroyed: the snapshot's root object (the
	// environment) is doomed, so the whole deployment is destroyed.
	WarnEnvironmentDestroyed WarnCode = "environment_destroyed"
	// WarnHookCannotRun: a hook file exists but cannot run, e.g. it is not
	// executable (added by whoever looks hooks up: the CLI's plan).
	WarnHookCannotRun WarnCode = "hook_cannot_run"
	// WarnPackageMissing: types name a package that the package cache in
	// use does not hold (PackageWarnings).
	WarnPackageMissing WarnCode = "package_missing"
)

// Reason is one reason for an object's place.
type Reason struct {
	Code    ReasonCode `json:"code"`
	ID      string     `json:"id,omitempty"`
	Handler string     `json:"handler,omitempty"`
}

// Text renders r for people.
func (r Reason) Text() string {
	switch r.Code {
	case ReasonOwnedBy:
		return "owned by " + r.ID
	case ReasonSubscriber:
		return r.ID + " subscribes to its destruction"
	case ReasonCycle:
		return r.ID + " subscribes to its destruction (ignored: cycle)"
	case ReasonOwnerSurvives:
		return "its owner " + r.ID + " stays"
	case ReasonTopLevel:
		return "it has no owner"
	}
	return string(r.Code)
}

// Planned is one doomed object of the plan.
type Planned struct {
	Snapshot int32 // index in the snapshot tree's Objects
	ID       string
	Type     string // the type as written in the snapshot
	Class    string // the type's class name
	Path     string // JSON path in the snapshot document
	Owner    string // the owner's id, "" at the top
	Group    int    // the group index
	Reasons  []Reason
}

// Group is the objects destroyed together (in parallel), in snapshot
// document order.
type Group struct {
	Index   int
	Objects []int // indexes into Plan.Objects
}

// Notification is a subscriber's handler run before a publisher is
// destroyed.
type Notification struct {
	Group      int
	Publisher  int // index into Plan.Objects
	Subscriber string
	Handler    string
	// SubscriberDoomed is true when the subscriber is doomed itself (it is
	// still notified: all notifications come before any destroy).
	SubscriberDoomed bool
}

// Warning is something a user should look at; it does not stop the plan.
type Warning struct {
	Code    WarnCode `json:"code"`
	Message string   `json:"message"`
	ID      string   `json:"id,omitempty"`
	Path    string   `json:"path,omitempty"`
}

// Plan is the ordered destruction of the doomed objects of a Diff.
type Plan struct {
	Diff *diff.Result
	// Objects holds the doomed objects, in snapshot document order.
	Objects []Planned
	// Groups are in destruction order: descending index, deepest first.
	Groups []Group
	// Notifications are in the order they run: groups by ascending index,
	// publishers in document order, records in header order.
	Notifications []Notification
	// Cycles lists each cycle's members (indexes into Objects) in document
	// order.
	Cycles   [][]int
	Warnings []Warning

	nodes []Node // the ordering graph, by index into Objects
}

// Successors returns the doomed objects that must be destroyed after
// object i (indexes into Objects): its owner when doomed, and its doomed
// subscribers (also those whose edge was ignored to break a cycle). A
// failed destroy of i blocks them (DESIGN.md section 4).
func (p *Plan) Successors(i int) []int {
	n := p.nodes[i]
	out := make([]int, 0, 1+len(n.Subscribers))
	if n.Owner >= 0 {
		out = append(out, int(n.Owner))
	}
	for _, w := range n.Subscribers {
		out = append(out, int(w))
	}
	return out
}

// NewPlan orders the doomed objects of d (DESIGN.md section 3).
func NewPlan(d *diff.Result) *Plan {
	p, _ := NewPlanContext(context.Background(), d)
	return p
}

// checkEvery is how many objects NewPlanContext handles between two looks
// at its context.
const checkEvery = 1 << 12

// NewPlanContext is NewPlan that gives up when ctx is done, within a few
// thousand objects, and returns ctx.Err() and no Plan.
func NewPlanContext(ctx context.Context, d *diff.Result) (*Plan, error) {
	snap, in := d.Snapshot, d.Incoming
	p := &Plan{Diff: d, Objects: make([]Planned, len(d.Doomed))}
	nodeOf := make([]int32, len(snap.Objects)) // snapshot index -> node, -1
	for i := range nodeOf {
		nodeOf[i] = -1
	}
	for n, i := range d.Doomed {
		nodeOf[i] = int32(n)
	}
	nodes := make([]Node, len(d.Doomed))
	// mark[w] == stamp: node w is already in the list being built. A
	// publisher may name 60,000 subscribers: searching the list for each
	// was quadratic (issue 9).
	mark := make([]int32, len(d.Doomed))
	stamp := int32(0)
	for n, i := range d.Doomed {
		if n%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		snap.Doc.Release() // doomed objects lie pages apart: see snapshot.Document.Release
		stamp++
		o := &snap.Objects[i]
		nodes[n] = Node{Owner: -1, Key: o.Start}
		if o.Owner >= 0 {
			nodes[n].Owner = nodeOf[o.Owner]
		}
		for _, dep := range snap.Dependencies(i) {
			j, ok := snap.Lookup(dep.Subscriber)
			if !ok || !d.IsDoomed(j) {
				if !ok {
					if _, alive := in.Lookup(dep.Subscriber); !alive {
						p.warn(WarnSubscriberMissing, o.ID, snap.ObjectPath(i),
							"onDestruction record of %s names subscriber %s, which is in neither model; ignored", o.ID, dep.Subscriber)
					}
				}
				continue
			}
			w := nodeOf[j]
			if w == int32(n) || w == nodes[n].Owner || mark[w] == stamp {
				continue
			}
			mark[w] = stamp
			nodes[n].Subscribers = append(nodes[n].Subscribers, w)
		}
	}
	ord := Order(nodes)
	p.nodes = nodes
	for n, i := range d.Doomed {
		if n%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		snap.Doc.Release() // doomed objects lie pages apart: see snapshot.Document.Release
		o := &snap.Objects[i]
		pl := &p.Objects[n]
		*pl = Planned{Snapshot: i, ID: o.ID, Type: o.TypeString, Class: o.Type().Name, Path: snap.ObjectPath(i), Group: int(ord.Index[n])}
		if o.Owner >= 0 {
			pl.Owner = snap.Objects[o.Owner].ID
		}
		if o.Start == snap.Start {
			p.warnRoot(pl)
		}
		switch {
		case nodes[n].Owner >= 0:
			pl.Reasons = append(pl.Reasons, Reason{Code: ReasonOwnedBy, ID: pl.Owner})
		case o.Owner >= 0:
			pl.Reasons = append(pl.Reasons, Reason{Code: ReasonOwnerSurvives, ID: pl.Owner})
		default:
			pl.Reasons = append(pl.Reasons, Reason{Code: ReasonTopLevel})
		}
		// Ignored subscribers get stamp+1, the ones listed stamp+2.
		stamp += 2
		for _, w := range ord.Ignored[int32(n)] {
			mark[w] = stamp - 1
		}
		for _, dep := range snap.Dependencies(i) {
			j, ok := snap.Lookup(dep.Subscriber)
			if !ok || !d.IsDoomed(j) || j == i || mark[nodeOf[j]] == stamp {
				continue
			}
			code := ReasonSubscriber
			if mark[nodeOf[j]] == stamp-1 {
				code = ReasonCycle
			}
			mark[nodeOf[j]] = stamp
			pl.Reasons = append(pl.Reasons, Reason{Code: code, ID: dep.Subscriber})
		}
	}
	for g := len(ord.Groups) - 1; g >= 0; g-- {
		grp := Group{Index: g + 1, Objects: make([]int, len(ord.Groups[g]))}
		for k, v := range ord.Groups[g] {
			grp.Objects[k] = int(v)
		}
		p.Groups = append(p.Groups, grp)
	}
	p.notifications(ord)
	for _, c := range ord.Cycles {
		members := make([]int, len(c))
		ids := make([]string, len(c))
		for k, v := range c {
			members[k] = int(v)
			ids[k] = p.Objects[v].ID
		}
		p.Cycles = append(p.Cycles, members)
		p.warn(WarnCycle, ids[0], p.Objects[c[0]].Path,
			"destruction dependencies form a cycle among %s; their dependency order is ignored, ownership is kept", strings.Join(ids, ", "))
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	p.diffWarnings()
	return p, nil
}

func (p *Plan) notifications(ord *Ordering) {
	d := p.Diff
	snap, in := d.Snapshot, d.Incoming
	for g, members := range ord.Groups {
		for _, v := range members {
			for _, dep := range snap.Dependencies(d.Doomed[v]) {
				if !dep.HasHandler {
					continue
				}
				doomed := false
				if j, ok := in.Lookup(dep.Subscriber); ok {
					if in.Objects[j].Destroyed {
						continue
					}
				} else if j, ok := snap.Lookup(dep.Subscriber); ok && d.IsDoomed(j) {
					doomed = true
				} else {
					continue
				}
				p.Notifications = append(p.Notifications, Notification{
					Group: g + 1, Publisher: int(v), Subscriber: dep.Subscriber, Handler: dep.Handler, SubscriberDoomed: doomed,
				})
			}
		}
	}
}

func (p *Plan) diffWarnings() {
	d := p.Diff
	snap, in := d.Snapshot, d.Incoming
	for _, r := range d.Dangling {
		referrer := r.ReferrerID
		if referrer == "" {
			referrer = "the model"
		}
		p.warn(WarnDangling, r.DoomedID, r.Path, "%s references doomed object %s at %s", referrer, r.DoomedID, r.Path)
	}
	for _, i := range snap.IDless {
		o := &snap.Objects[i]
		p.warn(WarnIDless, "", snap.ObjectPath(i),
			"object of type %s at %s has no id: it cannot be tracked between deployments and is never destroyed", orNone(o.TypeString), snap.ObjectPath(i))
	}
	for _, t := range []*snapshot.Tree{snap, in} {
		for _, dup := range t.Duplicates {
			if !dup.Differs {
				continue
			}
			f := &t.Objects[dup.First]
			p.warn(WarnDuplicateDiffers, f.ID, t.ObjectPath(dup.Copy),
				"object %s is written more than once with different content (%s: first at %s, again at %s); the first copy is used",
				f.ID, t.Doc.Name, t.ObjectPath(dup.First), t.ObjectPath(dup.Copy))
		}
	}
	for _, tc := range d.TypeChanges {
		p.warn(WarnTypeChanged, tc.ID, in.ObjectPath(tc.Incoming),
			"object %s changed type from %s to %s: it is the same object and is not destroyed", tc.ID, orNone(tc.OldString), orNone(tc.NewString))
	}
}

// warnRoot warns that pl, the snapshot's root object, is doomed: the whole
// environment is destroyed. That is what deleting an environment
// (Objects: null) means, and what planning two models of different
// environments does by mistake: the message says which.
func (p *Plan) warnRoot(pl *Planned) {
	in := p.Diff.Incoming
	for i := range in.Objects {
		if in.Objects[i].Start == in.Start {
			p.warn(WarnEnvironmentDestroyed, pl.ID, pl.Path,
				"the whole environment %s is destroyed: the incoming model's root is %s, another object; are both models of the same environment?", pl.ID, in.Objects[i].ID)
			return
		}
	}
	p.warn(WarnEnvironmentDestroyed, pl.ID, pl.Path, "the whole environment %s is destroyed: the incoming model has no objects (the environment is deleted)", pl.ID)
}

func (p *Plan) warn(code WarnCode, id, path, format string, args ...any) {
	p.Warnings = append(p.Warnings, Warning{Code: code, ID: id, Path: path, Message: fmt.Sprintf(format, args...)})
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
