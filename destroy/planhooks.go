package destroy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/pkgcache"
	"github.com/objgc/objgc/snapshot"
)

// PlanHooks are the hooks a plan would run (docs/design.md, "Hooks"),
// found once by findHooks: plan prints them, apply refuses a plan whose
// hooks cannot run (refusal) and sums them before it runs anything.
//
// What depends on a doomed object's type only (its class hierarchy,
// package and destroy hooks: HookFinder looks them up by type) is kept
// once a type, in Types; an object keeps the index of its type: a byte an
// object (four past 256 types) however many hooks its classes have.
type PlanHooks struct {
	kind  kindIndex    // by index into Plan.Objects: index into Types
	Types []*TypeHooks // one for each distinct type of a doomed object
	// SubscriberTypes holds, by index into Plan.Notifications, the
	// subscriber's type (subscriberType); nil: not found. One Type a
	// distinct subscriber type, shared by its notifications.
	SubscriberTypes []*snapshot.Type
	// Notify holds, by index into Plan.Notifications, the handler's hook;
	// nil: none.
	Notify []*hook.Found
	// OldNotify are, by index into Plan.Notifications when it has no
	// hook, files at <dir>/<C>/<handler>: where notify hooks were kept
	// before <C>/notify/<handler>. They do not run.
	OldNotify [][]string
}

// TypeHooks is what a plan knows of one type of doomed object.
type TypeHooks struct {
	Type    snapshot.Type // the type its hooks are looked up by
	Own     []string      // the classes listed when the hierarchy is not known: Type's own, or none
	Classes []string      // the class hierarchy; nil when not looked up
	Package string        // FullName/version of the defining package, "" if not cached
	Destroy []hook.Found  // its destroy hooks, in the order they run
	// PackageHooks: a cached package whose hooks run defines the class
	// or an ancestor (a hook source without a hooks dir).
	PackageHooks bool
}

// Kind returns the index into Types of the type of Plan.Objects[i].
func (h *PlanHooks) Kind(i int) int32 { return h.kind.at(i) }

// Of returns what is known of the type of Plan.Objects[i].
func (h *PlanHooks) Of(i int) *TypeHooks { return h.Types[h.kind.at(i)] }

// kindIndex holds an index into PlanHooks.Types for each doomed object: a
// byte each while they number at most 256 (a model's types are a few
// dozen), widened to four once one is past that: four bytes each would
// be a visible part of the memory bound of a plan of a million tiny
// objects.
type kindIndex struct {
	narrow []uint8
	wide   []int32 // once widened; narrow is then nil
}

func newKindIndex(n int) kindIndex { return kindIndex{narrow: make([]uint8, n)} }

func (x *kindIndex) len() int { return len(x.narrow) + len(x.wide) }

func (x *kindIndex) at(i int) int32 {
	if x.wide != nil {
		return x.wide[i]
	}
	return int32(x.narrow[i])
}

func (x *kindIndex) set(i int, k int32) {
	switch {
	case x.wide != nil:
		x.wide[i] = k
	case k <= math.MaxUint8:
		x.narrow[i] = uint8(k)
	default:
		x.wide = make([]int32, len(x.narrow))
		for j, v := range x.narrow {
			x.wide[j] = int32(v)
		}
		x.narrow = nil
		x.wide[i] = k
	}
}

// findHooks looks up every hook plan p would run, through f (nil: no
// hooks): the destroy hooks of each doomed object's class hierarchy, the
// handler hook of each notification's subscriber. It is the one place
// plan and apply's checks find a plan's hooks. When ctx is done it stops
// early and what it returns is partial: the caller writes and runs
// nothing.
func findHooks(ctx context.Context, p *order.Plan, f *HookFinder) *PlanHooks {
	h := &PlanHooks{
		kind:            newKindIndex(len(p.Objects)),
		SubscriberTypes: make([]*snapshot.Type, len(p.Notifications)),
		Notify:          make([]*hook.Found, len(p.Notifications)),
		OldNotify:       make([][]string, len(p.Notifications)),
	}
	snap := p.Diff.Snapshot
	index := map[snapshot.Type]int32{}
	for i := range p.Objects {
		t := snap.Type(p.Objects[i].Snapshot)
		k, ok := index[t]
		if !ok {
			k = int32(len(h.Types))
			index[t] = k
			th := &TypeHooks{Type: t, Own: []string{}}
			if t.Name != "" {
				th.Own = []string{t.Name} // one slice a type, not one an object
			}
			h.Types = append(h.Types, th)
		}
		h.kind.set(i, k)
	}
	// A copy of the type for each of tens of thousands of subscribers of
	// one type would cost memory in proportion to them.
	subTypes := map[snapshot.Type]*snapshot.Type{}
	for i, n := range p.Notifications {
		if t, ok := subscriberType(p, n); ok {
			if subTypes[t] == nil {
				subTypes[t] = &t
			}
			h.SubscriberTypes[i] = subTypes[t]
		}
	}
	if f == nil || len(f.Dirs) == 0 && f.Packages == nil {
		return h
	}
	for _, k := range h.Types {
		if ctx.Err() != nil {
			return h
		}
		c := f.Hierarchy(ctx, k.Type)
		k.Classes, k.Package, k.PackageHooks = c.Names, c.Package, len(c.PackageDirs) > 0
		k.Destroy = f.DestroyHooks(ctx, k.Type)
	}
	for i, n := range p.Notifications {
		if ctx.Err() != nil {
			return h
		}
		if t := h.SubscriberTypes[i]; t != nil {
			if found, ok := f.HandlerHook(ctx, *t, n.Handler); ok {
				h.Notify[i] = &found
			} else {
				h.OldNotify[i] = f.OldHandlerPlaces(ctx, *t, n.Handler)
			}
		}
	}
	return h
}

// subscriberType returns the type of notification n's subscriber, whose
// handler hook runs: from the incoming model when it lives there, else
// from the snapshot, where applyPlan finds it.
func subscriberType(p *order.Plan, n order.Notification) (snapshot.Type, bool) {
	for _, t := range []*snapshot.Tree{p.Diff.Incoming, p.Diff.Snapshot} {
		if t == nil {
			continue
		}
		if j, ok := t.Lookup(n.Subscriber); ok {
			return t.Type(j), true
		}
	}
	return snapshot.Type{}, false
}

// each calls fn with every hook applyPlan would run for p, the plan h was
// found for: each destroy hook of doomed object i (n nil), then the
// handler hook of each notification n (i its publisher).
func (h *PlanHooks) each(p *order.Plan, fn func(f hook.Found, i int, n *order.Notification)) {
	for i := range h.kind.len() {
		for _, f := range h.Of(i).Destroy {
			fn(f, i, nil)
		}
	}
	for k := range p.Notifications {
		if f := h.Notify[k]; f != nil {
			fn(*f, int(p.Notifications[k].Publisher), &p.Notifications[k])
		}
	}
}

// WithoutDestroyHook counts the doomed objects that have no destroy hook.
func (h *PlanHooks) WithoutDestroyHook() int {
	n := 0
	for i := range h.kind.len() {
		if len(h.Of(i).Destroy) == 0 {
			n++
		}
	}
	return n
}

// distinct calls fn once for each hook found, by path: the destroy hooks
// type by type, then the notify hooks in the order of the notifications.
func (h *PlanHooks) distinct(fn func(f hook.Found)) {
	seen := map[string]bool{}
	visit := func(f hook.Found) {
		if !seen[f.Path] {
			seen[f.Path] = true
			fn(f)
		}
	}
	for _, k := range h.Types {
		for _, f := range k.Destroy {
			visit(f)
		}
	}
	for _, f := range h.Notify {
		if f != nil {
			visit(*f)
		}
	}
}

// writerProblems returns every file and directory through which
// someone other than the user or root could change a hook found
// (hook.WritersProblems), each once (for the first hook it is on the
// way to), hooks in the order distinct gives them: all of them at once,
// so that one fix covers them.
func (h *PlanHooks) writerProblems() []error {
	var problems []error
	seen := map[string]bool{}
	h.distinct(func(f hook.Found) {
		// A package's hook whose user is unknown is refused for that
		// (HookFinder.setUser); chown advice would be wrong for it.
		var ue *pkgcache.HookUserError
		if errors.As(f.Err, &ue) {
			return
		}
		for _, we := range hook.WritersProblems(f) {
			if !seen[we.Path] {
				seen[we.Path] = true
				problems = append(problems, we)
			}
		}
	})
	return problems
}

// argsProblems returns every hook found that cannot be given its
// arguments and environment (HookArgs, of env), in the order they run.
func (h *PlanHooks) argsProblems(p *order.Plan, env []string) []HookArgsProblem {
	args := NewHookArgs(env)
	var problems []HookArgsProblem
	snap := p.Diff.Snapshot
	h.each(p, func(f hook.Found, i int, n *order.Notification) {
		id, typ := p.ID(i), snap.TypeString(p.Objects[i].Snapshot)
		if n == nil {
			if err := args.Destroy(f, id, typ, int(p.Objects[i].Group)); err != nil {
				problems = append(problems, HookArgsProblem{ID: id, Type: typ, Path: p.Path(i), Hook: f.Path, Err: err})
			}
			return
		}
		if err := args.Notify(f, id, typ, *n); err != nil {
			problems = append(problems, HookArgsProblem{ID: id, Type: typ, Hook: f.Path, Handler: n.Handler, Subscriber: n.Subscriber, Err: err})
		}
	})
	return problems
}

// RefusesSuffix ends the message of every warning of a hook apply
// refuses to run (warnings).
const RefusesSuffix = ": apply refuses to run"

// warnings returns plan's warnings (order.WarnHookCannotRun) about the
// hooks of p, each of them a hook apply refuses to run: every hook found
// that cannot run (hook.Found.Err), every one others could change
// (hook.CheckWriters), every one that cannot be given its arguments of
// environment env (HookArgs); problems lists them for Refusals.
func (h *PlanHooks) warnings(p *order.Plan, env []string) (warnings []order.Warning, problems hookProblems) {
	seen := map[string]bool{}
	for i := range p.Objects {
		for _, f := range h.Of(i).Destroy {
			if f.Err != nil {
				id := p.ID(i)
				warnings = append(warnings, order.Warning{Code: order.WarnHookCannotRun, ID: id, Path: p.Path(i),
					Message: fmt.Sprintf("destroy hook %s of %s cannot run (%s)%s", f.Path, id, hookErrText(f), RefusesSuffix)})
				if !seen[f.Path] {
					seen[f.Path] = true
					problems.cannotRun = append(problems.cannotRun, f)
				}
			}
		}
	}
	for i, n := range p.Notifications {
		if f := h.Notify[i]; f != nil && f.Err != nil {
			warnings = append(warnings, order.Warning{Code: order.WarnHookCannotRun, ID: n.Subscriber,
				Message: fmt.Sprintf("notify hook %s (%s of %s) cannot run (%s)%s", f.Path, n.Handler, n.Subscriber, hookErrText(*f), RefusesSuffix)})
			if !seen[f.Path] {
				seen[f.Path] = true
				problems.cannotRun = append(problems.cannotRun, *f)
			}
		}
	}
	problems.writers = h.writerProblems()
	for _, err := range problems.writers {
		warnings = append(warnings, order.Warning{Code: order.WarnHookCannotRun, Message: err.Error() + RefusesSuffix})
	}
	problems.args = h.argsProblems(p, env)
	for _, pr := range problems.args {
		w := order.Warning{Code: order.WarnHookCannotRun, ID: pr.ID, Path: pr.Path, Message: pr.Message() + RefusesSuffix}
		if pr.Handler != "" {
			w.ID = pr.Subscriber
		}
		warnings = append(warnings, w)
	}
	return warnings, problems
}

// hookErrText is why a hook found cannot run, without its path.
func hookErrText(f hook.Found) string {
	switch {
	case errors.Is(f.Err, hook.ErrNoexecMount):
		return "its file system is mounted noexec; keep hooks on a file system mounted with exec"
	case errors.Is(f.Err, hook.ErrNotExecutable):
		return "not executable; chmod +x it"
	}
	return strings.TrimPrefix(f.Err.Error(), f.Path+": ")
}
