package order

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/objgc/objgc/diff"
	"github.com/objgc/objgc/snapshot"
)

// ReasonCode says why an object sits in its group (docs/design.md, "The
// plan").
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
	// WarnHierarchyIncomplete: the package cache holds the package of a
	// doomed object's class but could not give its whole hierarchy (an
	// ancestor class in no cached package, say), so the class is taken
	// alone (PackageWarnings).
	WarnHierarchyIncomplete WarnCode = "hierarchy_incomplete"
	// WarnPatchRevivesDoomed: a notify hook's patch holds a string equal
	// to a doomed object's id, so the write-back keeps that object in the
	// model, flagged destroyed (apply only: RevivalWarnings).
	WarnPatchRevivesDoomed WarnCode = "patch_revives_doomed"
	// WarnHooksIgnored: a package murano-engine unpacked ships hooks for
	// a doomed object's classes, and they do not run: such packages came
	// from the catalog, which tenants upload to (pkgcache.Package.RunsHooks).
	WarnHooksIgnored WarnCode = "hooks_ignored"
	// WarnEngineCannotLoad: with --on-dangling=keep, a doomed object that
	// a live one still references is written flagged destroyed, a form
	// Murano 14's engine cannot load (destroy.KeepWarnings).
	WarnEngineCannotLoad WarnCode = "engine_cannot_load"
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

// Doomed is what a plan keeps of one doomed object: 8 bytes and no pointer,
// so that a plan of a million tiny objects costs 8 bytes an object beside
// its model (memory bounded by the input for every shape). Everything else
// about the object (its id, type, path, owner and reasons) is found again in
// the snapshot when asked for: Plan.Object, Plan.ID, Plan.Path,
// Plan.Reasons.
type Doomed struct {
	Snapshot int32 // index in the snapshot tree's Objects (a first copy)
	Group    int32 // the group index
}

// Planned is one doomed object as the plan lists it, built from the
// snapshot by Plan.Object when asked for (it is not kept: Plan.Objects
// holds a Doomed for each).
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
	Index int
	// Objects are indexes into Plan.Objects, int32 as every index of a
	// plan (4 bytes a doomed object, not 8).
	Objects []int32
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
// A plan's are read through Plan.Warning and Plan.WarningCount.
type Warning struct {
	Code    WarnCode `json:"code"`
	Message string   `json:"message"`
	ID      string   `json:"id,omitempty"`
	Path    string   `json:"path,omitempty"`
}

// lazyWarning is a warning of which there can be one for each reference,
// id-less object, copy or type change of the models: what it is about,
// 8 bytes, from which Plan.Warning makes it whole when asked: paths and
// messages for tens of thousands of copies of one object, held to the end
// of the plan, would cost far more than the input.
type lazyWarning struct {
	kind  lazyKind
	about int32 // index in Diff.Dangling, Snapshot.IDless, a tree's Duplicates or Diff.TypeChanges
}

type lazyKind uint8

const (
	lazyDangling lazyKind = iota
	lazyIDless
	lazySnapshotCopy
	lazyIncomingCopy
	lazyTypeChange
)

// WarningCount returns how many warnings p has.
func (p *Plan) WarningCount() int { return len(p.Warnings) + len(p.lazy) }

// Warning returns the warning k of p (from 0 to WarningCount), whole:
// those of Plan.Warnings, and where the comparison's warnings sit among
// them (after the ordering's, before those added later), each made now
// from what it is about.
func (p *Plan) Warning(k int) Warning {
	switch {
	case k < p.lazyAt:
		return p.Warnings[k]
	case k >= p.lazyAt+len(p.lazy):
		return p.Warnings[k-len(p.lazy)]
	}
	w := p.lazy[k-p.lazyAt]
	d := p.Diff
	snap, in := d.Snapshot, d.Incoming
	switch w.kind {
	case lazyDangling:
		r := d.Dangling[w.about]
		referrer := r.ReferrerID
		if referrer == "" {
			referrer = "the model"
		}
		return Warning{Code: WarnDangling, ID: r.DoomedID, Path: r.Path,
			Message: fmt.Sprintf("%s references doomed object %s at %s", referrer, r.DoomedID, r.Path)}
	case lazyIDless:
		i := snap.IDless[w.about]
		path := snap.ObjectPath(i)
		return Warning{Code: WarnIDless, Path: path,
			Message: fmt.Sprintf("object of type %s at %s has no id: it cannot be tracked between deployments and is never destroyed", orNone(snap.TypeString(i)), path)}
	case lazySnapshotCopy, lazyIncomingCopy:
		t := snap
		if w.kind == lazyIncomingCopy {
			t = in
		}
		dup := t.Duplicates[w.about]
		path := t.ObjectPath(dup.Copy)
		return Warning{Code: WarnDuplicateDiffers, ID: t.ID(dup.First), Path: path,
			Message: fmt.Sprintf("object %s is written more than once with different content (%s: first at %s, again at %s); the first copy is used",
				t.ID(dup.First), t.Doc.Name, t.ObjectPath(dup.First), path)}
	default: // lazyTypeChange
		tc := d.TypeChanges[w.about]
		return Warning{Code: WarnTypeChanged, ID: tc.ID, Path: in.ObjectPath(tc.Incoming),
			Message: fmt.Sprintf("object %s changed type from %s to %s: it is the same object and is not destroyed", tc.ID, orNone(tc.OldString), orNone(tc.NewString))}
	}
}

// AllWarnings returns every warning of p whole (Warning).
func (p *Plan) AllWarnings() []Warning {
	out := make([]Warning, p.WarningCount())
	for k := range out {
		out[k] = p.Warning(k)
	}
	return out
}

// Plan is the ordered destruction of the doomed objects of a Diff.
type Plan struct {
	Diff *diff.Result
	// Objects holds the doomed objects, in snapshot document order (that
	// of their Start offsets).
	Objects []Doomed
	// Groups are in destruction order: descending index, deepest first.
	Groups []Group
	// Notifications are in the order they run: groups by ascending index,
	// publishers in document order, records in header order.
	Notifications []Notification
	// Cycles lists each cycle's members (indexes into Objects) in document
	// order.
	Cycles [][]int
	// Warnings are the warnings made whole: the ordering's, and those
	// appended once the plan is made (packages, hooks). The comparison's
	// (dangling references, id-less objects, differing copies, changed
	// types) are kept apart as what each is about: read all of them, in
	// order, through WarningCount and Warning.
	Warnings []Warning

	// ignored holds, by index into Objects, the snapshot indexes of the
	// subscribers whose dependency edge order ignored to break a cycle:
	// the one fact about an object's reasons the snapshot cannot tell.
	ignored map[int32][]int32
	// lazy are the comparison's warnings, kept as what each is about;
	// they come after the first lazyAt of Warnings (Plan.Warning).
	lazy   []lazyWarning
	lazyAt int
}

// Object returns Plan.Objects[i] as the plan lists it, built from the
// snapshot: its path rendered, its reasons found again (Reasons). A
// value, not a pointer, as Header's.
func (p *Plan) Object(i int) Planned {
	pl := p.Header(i)
	pl.Path, pl.Reasons = p.Path(i), p.Reasons(i)
	return pl
}

// Header is Object without the path and reasons: what the object's
// header and place say (id, type, class, group, owner). Hooks are not
// given the path, and rendering one reads keys far apart in the model, a
// large part of an apply's time; apply's report shows neither. A value:
// a pointer would put each on the heap, garbage for every object when
// writing the plan of a million doomed objects.
func (p *Plan) Header(i int) Planned {
	snap := p.Diff.Snapshot
	si := p.Objects[i].Snapshot
	pl := Planned{Snapshot: si, ID: snap.ID(si), Type: snap.TypeString(si), Class: snap.Type(si).Name, Group: int(p.Objects[i].Group)}
	if owner := snap.Owner(si); owner >= 0 {
		pl.Owner = snap.ID(owner)
	}
	return pl
}

// ID returns the id of Plan.Objects[i] (from the tree's copy of the ids:
// it reads none of the document).
func (p *Plan) ID(i int) string {
	return p.Diff.Snapshot.ID(p.Objects[i].Snapshot)
}

// Path returns the JSON path of Plan.Objects[i] in the snapshot document,
// e.g. $.ObjectsCopy.applications[2]; a new string each call. It reads
// none of the document (snapshot.Tree.ObjectPath), so that the loops over
// the doomed objects in the order the plan lists them need not visit
// their pages.
func (p *Plan) Path(i int) string { return p.Diff.Snapshot.ObjectPath(p.Objects[i].Snapshot) }

// Reasons returns why Plan.Objects[i] sits in its group, found again in
// the snapshot (a new slice each call): first its owner (ReasonOwnedBy
// when the owner is doomed too, ReasonOwnerSurvives, or ReasonTopLevel),
// then each of its doomed subscribers once, in the order of its
// onDestruction records, ReasonCycle for those whose dependency was
// ignored to break a cycle, else ReasonSubscriber.
func (p *Plan) Reasons(i int) []Reason {
	d := p.Diff
	snap := d.Snapshot
	si := p.Objects[i].Snapshot
	owner := snap.Owner(si)
	out := make([]Reason, 1, 1+len(snap.Dependencies(si)))
	switch {
	case owner >= 0 && d.IsDoomed(owner):
		out[0] = Reason{Code: ReasonOwnedBy, ID: snap.ID(owner)}
	case owner >= 0:
		out[0] = Reason{Code: ReasonOwnerSurvives, ID: snap.ID(owner)}
	default:
		out[0] = Reason{Code: ReasonTopLevel}
	}
	ignored := p.ignored[int32(i)]
	isIgnored := func(j int32) bool { return slices.Contains(ignored, j) }
	if len(ignored) > 8 {
		// A cycle may hold a publisher and 60,000 of its subscribers.
		set := make(map[int32]bool, len(ignored))
		for _, j := range ignored {
			set[j] = true
		}
		isIgnored = func(j int32) bool { return set[j] }
	}
	p.doomedSubscribers(si, func(j int32, id string) {
		code := ReasonSubscriber
		if isIgnored(j) {
			code = ReasonCycle
		}
		out = append(out, Reason{Code: code, ID: id})
	})
	return out
}

// doomedSubscribers calls yield for each doomed subscriber of snapshot
// object si other than itself, once, in the order of its onDestruction
// records (the same subscriber may be named again with another handler),
// with its snapshot index and id.
func (p *Plan) doomedSubscribers(si int32, yield func(j int32, id string)) {
	d := p.Diff
	snap := d.Snapshot
	deps := snap.Dependencies(si)
	// A publisher may name 60,000 subscribers: a set past a few, so that
	// finding the repeats is not quadratic.
	var seen map[int32]bool
	if len(deps) > 8 {
		seen = make(map[int32]bool, len(deps))
	}
	var listed [8]int32
	n := 0
	for _, dep := range deps {
		j, ok := snap.Lookup(dep.Subscriber)
		if !ok || j == si || !d.IsDoomed(j) {
			continue
		}
		if seen != nil {
			if seen[j] {
				continue
			}
			seen[j] = true
		} else {
			if slices.Contains(listed[:n], j) {
				continue
			}
			listed[n] = j
			n++
		}
		yield(j, dep.Subscriber)
	}
}

// IndexOf returns the index in Objects of snapshot object j, -1 when it
// is not doomed: Objects is in document order, so a binary search on the
// objects' Start offsets.
func (p *Plan) IndexOf(j int32) int {
	if !p.Diff.IsDoomed(j) {
		return -1
	}
	objs := p.Diff.Snapshot.Objects
	start := objs[j].Start
	k, found := slices.BinarySearchFunc(p.Objects, start, func(e Doomed, s int32) int { return cmp.Compare(objs[e.Snapshot].Start, s) })
	if !found {
		return -1
	}
	return k
}

// Successors returns the doomed objects that must be destroyed after
// object i (indexes into Objects), as successors finds them. A failed
// destroy of i blocks them (docs/design.md, "Hooks"). They are found again
// in the snapshot: O(s log n) for s onDestruction records.
func (p *Plan) Successors(i int) []int {
	var out []int
	p.successors(p.Objects[i].Snapshot, func(j int32, _ bool) {
		out = append(out, p.IndexOf(j))
	})
	return out
}

// successors is the order's rule (docs/design.md, "The order"): the doomed
// objects that must be destroyed after snapshot object si are its owner
// when doomed, then its doomed subscribers (doomedSubscribers, which also
// names those whose edge is ignored to break a cycle), each once. yield
// gets each one's snapshot index, and owner true for the owner. The
// ordering's graph and Successors are both made here.
func (p *Plan) successors(si int32, yield func(j int32, owner bool)) {
	owner := p.Diff.Snapshot.Owner(si)
	if owner >= 0 && p.Diff.IsDoomed(owner) {
		yield(owner, true)
	} else {
		owner = -1
	}
	p.doomedSubscribers(si, func(j int32, _ string) {
		if j != owner {
			yield(j, false)
		}
	})
}

// NewPlan orders the doomed objects of d (docs/design.md, "The order").
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
	p := &Plan{Diff: d, ignored: map[int32][]int32{}}
	nodeOf := make([]int32, len(snap.Objects)) // snapshot index -> node, -1
	for i := range nodeOf {
		nodeOf[i] = -1
	}
	for n, i := range d.Doomed {
		nodeOf[i] = int32(n)
	}
	// The ordering graph, in document order (no keys needed): 8 bytes a
	// doomed object and 4 a doomed subscriber, dropped once ordered.
	g := &graph{owner: make([]int32, len(d.Doomed)), subEnd: make([]int32, len(d.Doomed))}
	for n, i := range d.Doomed {
		if n%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		g.owner[n] = -1
		for _, dep := range snap.Dependencies(i) {
			if _, ok := snap.Lookup(dep.Subscriber); ok {
				continue
			}
			if _, alive := in.Lookup(dep.Subscriber); !alive {
				p.warn(WarnSubscriberMissing, snap.ID(i), snap.ObjectPath(i),
					"onDestruction record of %s names subscriber %s, which is in neither model; ignored", snap.ID(i), dep.Subscriber)
			}
		}
		p.successors(i, func(j int32, owner bool) {
			if owner {
				g.owner[n] = nodeOf[j]
			} else {
				g.subs = append(g.subs, nodeOf[j])
			}
		})
		g.subEnd[n] = int32(len(g.subs))
	}
	// What the plan keeps is made once the ordering is done, its graph
	// and node map no longer used: on a million doomed objects they and
	// the ordering's transients set the plan's peak.
	ord := order(g)
	p.Objects = make([]Doomed, len(d.Doomed))
	for v, ws := range ord.Ignored {
		subs := make([]int32, len(ws))
		for k, w := range ws {
			subs[k] = d.Doomed[w]
		}
		p.ignored[v] = subs
	}
	for n, i := range d.Doomed {
		if n%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		p.Objects[n] = Doomed{Snapshot: i, Group: ord.Index[n]}
		if int(snap.Objects[i].Start) == snap.Start {
			p.warnRoot(n)
		}
	}
	for g := len(ord.Groups) - 1; g >= 0; g-- {
		// The ordering's own array: nothing else holds it.
		p.Groups = append(p.Groups, Group{Index: g + 1, Objects: ord.Groups[g]})
	}
	p.notifications(ord)
	for _, c := range ord.Cycles {
		members := make([]int, len(c))
		ids := make([]string, len(c))
		for k, v := range c {
			members[k] = int(v)
			ids[k] = p.ID(int(v))
		}
		p.Cycles = append(p.Cycles, members)
		p.warn(WarnCycle, ids[0], p.Path(int(c[0])),
			"destruction dependencies form a cycle among %s; their dependency order is ignored, ownership is kept", strings.Join(ids, ", "))
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	p.diffWarnings()
	return p, nil
}

func (p *Plan) notifications(ord *ordering) {
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
					if in.Objects[j].Destroyed() {
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
	p.lazyAt = len(p.Warnings)
	add := func(kind lazyKind, about int) {
		p.lazy = append(p.lazy, lazyWarning{kind: kind, about: int32(about)})
	}
	for k := range d.Dangling {
		add(lazyDangling, k)
	}
	for k := range snap.IDless {
		add(lazyIDless, k)
	}
	for _, t := range []*snapshot.Tree{snap, in} {
		kind := lazySnapshotCopy
		if t == in {
			kind = lazyIncomingCopy
		}
		for k, dup := range t.Duplicates {
			if dup.Differs {
				add(kind, k)
			}
		}
	}
	for k := range d.TypeChanges {
		add(lazyTypeChange, k)
	}
}

// warnRoot warns that object i, the snapshot's root object, is doomed: the whole
// environment is destroyed. That is what deleting an environment
// (Objects: null) means, and what planning two models of different
// environments does by mistake: the message says which.
func (p *Plan) warnRoot(i int) {
	id, path := p.ID(i), p.Path(i)
	in := p.Diff.Incoming
	for i := range in.Objects {
		if int(in.Objects[i].Start) == in.Start {
			p.warn(WarnEnvironmentDestroyed, id, path,
				"the whole environment %s is destroyed: the incoming model's root is %s, another object; are both models of the same environment?", id, in.ID(int32(i)))
			return
		}
	}
	p.warn(WarnEnvironmentDestroyed, id, path, "the whole environment %s is destroyed: the incoming model has no objects (the environment is deleted)", id)
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
