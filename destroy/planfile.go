package destroy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/destroy/planfile"
	"github.com/objgc/objgc/internal/inputfile"
	"github.com/objgc/objgc/pkgcache"
	"github.com/objgc/objgc/snapshot"
)

// PlanChanges returns how what apply finds now differs from what the saved
// plan sp recorded, in lower case, one difference each: inputs changed or
// gone (sha256), hooks dirs gone, hooks added, removed, changed or run in
// another order, packages replaced, added or gone. finder looks in the
// plan's hooks dirs and package cache (sp.HooksDirs, sp.CacheDir); it
// remembers what it found, so a run with it runs exactly the hooks
// compared. None: nil.
func PlanChanges(ctx context.Context, sp *planfile.File, finder *HookFinder) []string {
	return append(inputChanges(sp), hookChanges(ctx, sp, finder)...)
}

// inputChanges compares the sha256 of each input of a saved plan with
// the file now, before the lock: a plan that is stale already is refused
// without touching anything. (The inputs are compared again once the lock
// is held, for a change made while apply waited for it.)
func inputChanges(sp *planfile.File) []string {
	var diffs []string
	for _, in := range sp.Inputs {
		sum, err := inputfile.SHA256(in.Path)
		switch {
		case os.IsNotExist(err):
			diffs = append(diffs, fmt.Sprintf("%s no longer exists", in.Path))
		case err != nil:
			diffs = append(diffs, fmt.Sprintf("%s cannot be read: %v", in.Path, err))
		case sum != in.SHA256:
			diffs = append(diffs, InputChanged(in.Path, in.SHA256, sum))
		}
	}
	return diffs
}

// HookSums hashes hook files, each once however many objects share it.
type HookSums struct {
	mu sync.Mutex
	m  map[string]string
}

// NewHookSums returns an empty HookSums.
func NewHookSums() *HookSums { return &HookSums{m: map[string]string{}} }

// Hook returns f as a plan lists it, with the sha256 of its content
// ("" when it cannot be read; Error then says why if the lookup had not).
func (s *HookSums) Hook(f hook.Found) planfile.Hook {
	h := planfile.Hook{Event: f.Event, Class: f.Class, Path: f.Path}
	if u := f.Source.User; u != nil {
		h.RunAs = u.Name
	}
	if f.Err != nil {
		h.Error = f.Err.Error()
	}
	s.mu.Lock()
	sum, ok := s.m[f.Path]
	s.mu.Unlock()
	if !ok {
		var err error
		if sum, err = inputfile.SHA256(f.Path); err != nil && h.Error == "" {
			h.Error = err.Error()
		}
		s.mu.Lock()
		s.m[f.Path] = sum
		s.mu.Unlock()
	}
	h.SHA256 = sum
	return h
}

// SessionPackages lists the packages a session read.
func SessionPackages(s *pkgcache.Session) []planfile.Package {
	out := []planfile.Package{}
	if s == nil {
		return out
	}
	for _, p := range s.Packages() {
		out = append(out, planfile.Package{FullName: p.FullName, Version: p.Version, ID: p.ID})
	}
	return out
}

// hookChanges looks up now, with finder (the plan's hooks dirs and
// package cache), every hook the saved plan lists and returns the
// differences: hooks dirs gone, hooks added, removed or changed, packages
// replaced, added or gone. The finder remembers what it found: a run with
// it runs exactly the hooks compared here.
func hookChanges(ctx context.Context, sp *planfile.File, finder *HookFinder) []string {
	var diffs []string
	for _, d := range sp.HooksDirs {
		st, err := os.Stat(d)
		switch {
		case os.IsNotExist(err):
			diffs = append(diffs, fmt.Sprintf("hooks dir %s no longer exists", d))
		case err != nil:
			diffs = append(diffs, fmt.Sprintf("hooks dir %s cannot be read: %v", d, err))
		case !st.IsDir():
			diffs = append(diffs, fmt.Sprintf("hooks dir %s is no longer a directory", d))
		}
	}
	if len(diffs) > 0 {
		return diffs
	}
	sums := NewHookSums()
	var hookDiffs []string
	for _, g := range sp.Groups {
		for _, o := range g.Objects {
			var now []planfile.Hook
			for _, f := range finder.DestroyHooks(ctx, o.TypeRef.Type()) {
				now = append(now, sums.Hook(f))
			}
			hookDiffs = append(hookDiffs, compareHooks(o.Hooks, now)...)
		}
	}
	for _, n := range sp.Notifications {
		var planned, now []planfile.Hook
		if n.Hook != nil {
			planned = []planfile.Hook{*n.Hook}
		}
		if n.SubscriberTypeRef != nil {
			if found, ok := finder.HandlerHook(ctx, n.SubscriberTypeRef.Type(), n.Handler); ok {
				now = []planfile.Hook{sums.Hook(found)}
			}
		}
		hookDiffs = append(hookDiffs, compareHooks(planned, now)...)
	}
	pkgDiffs := comparePackages(sp.Packages, SessionPackages(finder.Packages))
	if len(pkgDiffs) > 0 {
		// A replaced package moves its hooks: the package is the news.
		inCache := filepath.Join(sp.CacheDir, "packages") + string(filepath.Separator)
		hookDiffs = slices.DeleteFunc(hookDiffs, func(d string) bool { return strings.HasPrefix(d, "hook "+inCache) })
	}
	diffs = append(diffs, pkgDiffs...)
	return dedupe(append(diffs, hookDiffs...))
}

// compareHooks returns how the hooks found now for one object or
// notification differ from the planned ones: added, removed, changed
// content (sha256), able or unable to run, or run in another order.
func compareHooks(planned, now []planfile.Hook) []string {
	var diffs []string
	was := make(map[string]planfile.Hook, len(planned))
	for _, h := range planned {
		was[h.Path] = h
	}
	is := make(map[string]bool, len(now))
	for _, h := range now {
		is[h.Path] = true
		p, ok := was[h.Path]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("hook %s was added since it was planned", h.Path))
		case p.SHA256 != h.SHA256:
			diffs = append(diffs, fmt.Sprintf("hook %s changed since it was planned (sha256 %s, now %s)", h.Path, short(orNoneSum(p.SHA256)), short(orNoneSum(h.SHA256))))
		case p.Error == "" && h.Error != "":
			diffs = append(diffs, fmt.Sprintf("hook %s can no longer run (%s)", h.Path, h.Error))
		case p.Error != "" && h.Error == "":
			diffs = append(diffs, fmt.Sprintf("hook %s can run now (when planned: %s)", h.Path, p.Error))
		}
	}
	for _, h := range planned {
		if !is[h.Path] {
			diffs = append(diffs, fmt.Sprintf("hook %s was removed since it was planned", h.Path))
		}
	}
	if len(diffs) == 0 && len(planned) == len(now) {
		for k := range now {
			if planned[k].Path != now[k].Path {
				diffs = append(diffs, fmt.Sprintf("hooks %s and %s run in another order than planned", planned[k].Path, now[k].Path))
				break
			}
		}
	}
	return diffs
}

// comparePackages returns how the cached packages read now differ from
// those a plan read: replaced (same FullName and version, another id),
// gone, or read now and not then.
func comparePackages(planned, now []planfile.Package) []string {
	type nv struct{ name, version string }
	ids := func(ps []planfile.Package) (map[nv][]string, []nv) {
		m := map[nv][]string{}
		var order []nv
		for _, p := range ps {
			k := nv{p.FullName, p.Version}
			if _, ok := m[k]; !ok {
				order = append(order, k)
			}
			m[k] = append(m[k], p.ID)
		}
		return m, order
	}
	was, wasOrder := ids(planned)
	is, isOrder := ids(now)
	var diffs []string
	for _, k := range wasOrder {
		nowIDs, ok := is[k]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("package %s %s (id %s) is no longer in the cache", k.name, k.version, short(was[k][0])))
		case strings.Join(was[k], ",") != strings.Join(nowIDs, ","):
			diffs = append(diffs, fmt.Sprintf("package %s %s was replaced (id %s, now %s)", k.name, k.version, shortList(was[k]), shortList(nowIDs)))
		}
	}
	for _, k := range isOrder {
		if _, ok := was[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("package %s %s (id %s) is used now and was not when planned", k.name, k.version, short(is[k][0])))
		}
	}
	return diffs
}

func shortList(ids []string) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = short(id)
	}
	return strings.Join(s, ", ")
}

// orNone is s, or "(none)" for an empty type.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func orNoneSum(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func dedupe(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// PlanMismatch returns how the plan p, made by apply from inputs that
// hash as the saved plan sp records, differs from what sp lists, one
// difference each in lower case: objects doomed and not listed, or listed
// and not doomed, in another group or order, looked up by another type;
// notifications added, missing, reordered or looked up by another
// subscriber type; objects dropped and not listed, or listed and not
// dropped. A saved plan is the whole instruction (docs/apply.md): an
// edited plan runs nothing the model implies beyond it, nor stops short
// of it. None: nil. With the types checked here, the hooks sp lists for
// its objects and notifications (compared with the files by
// PlanChanges) are the hooks the run finds.
func PlanMismatch(sp *planfile.File, p *order.Plan) []string {
	var diffs []string
	type listed struct {
		group int
		typ   planfile.Type
	}
	was := map[string]listed{}
	var wasOrder []string
	for _, g := range sp.Groups {
		for _, o := range g.Objects {
			if _, dup := was[o.ID]; dup {
				diffs = append(diffs, fmt.Sprintf("the plan lists object %s twice", o.ID))
				continue
			}
			was[o.ID] = listed{g.Index, o.TypeRef}
			wasOrder = append(wasOrder, o.ID)
		}
	}
	snap := p.Diff.Snapshot
	var nowOrder []string
	now := make(map[string]bool, len(p.Objects))
	for _, g := range p.Groups {
		for _, i := range g.Objects {
			o := p.Header(int(i))
			now[o.ID] = true
			nowOrder = append(nowOrder, o.ID)
			l, ok := was[o.ID]
			t := planfile.NewType(snap.Type(o.Snapshot))
			switch {
			case !ok:
				diffs = append(diffs, fmt.Sprintf("object %s (%s) is doomed and the plan does not list it", o.ID, orNone(o.Type)))
			case l.group != g.Index:
				diffs = append(diffs, fmt.Sprintf("object %s is in group %d and the plan lists it in group %d", o.ID, g.Index, l.group))
			case l.typ != t:
				diffs = append(diffs, fmt.Sprintf("object %s has type %s and the plan looks its hooks up by %s", o.ID, typeText(t), typeText(l.typ)))
			}
		}
	}
	for _, id := range wasOrder {
		if !now[id] {
			diffs = append(diffs, fmt.Sprintf("the plan lists object %s, which the model does not doom", id))
		}
	}
	if len(diffs) == 0 && !slices.Equal(wasOrder, nowOrder) {
		diffs = append(diffs, "the plan lists the objects of a group in another order than the model gives")
	}
	diffs = append(diffs, notificationMismatch(sp, p)...)

	inc := p.Diff.Incoming
	var droppedNow []string
	for _, j := range p.Diff.Dropped {
		droppedNow = append(droppedNow, inc.ID(j))
	}
	var droppedWas []string
	for _, d := range sp.Dropped {
		droppedWas = append(droppedWas, d.ID)
	}
	if !slices.Equal(droppedWas, droppedNow) {
		for _, id := range droppedNow {
			if !slices.Contains(droppedWas, id) {
				diffs = append(diffs, fmt.Sprintf("object %s (destroyed before) is dropped and the plan does not list it", id))
			}
		}
		for _, id := range droppedWas {
			if !slices.Contains(droppedNow, id) {
				diffs = append(diffs, fmt.Sprintf("the plan lists dropped object %s, which the model does not drop", id))
			}
		}
	}
	return diffs
}

// notificationMismatch is PlanMismatch's comparison of the notifications.
func notificationMismatch(sp *planfile.File, p *order.Plan) []string {
	type key struct {
		group                          int
		publisher, subscriber, handler string
	}
	text := func(k key) string {
		return fmt.Sprintf("notification %s of %s for %s (group %d)", k.handler, k.subscriber, k.publisher, k.group)
	}
	var diffs []string
	var wasKeys []key
	wasType := map[key]*planfile.Type{}
	for _, n := range sp.Notifications {
		k := key{n.Group, n.Publisher, n.Subscriber, n.Handler}
		wasKeys = append(wasKeys, k)
		wasType[k] = n.SubscriberTypeRef
	}
	var nowKeys []key
	for _, n := range p.Notifications {
		k := key{n.Group, p.ID(n.Publisher), n.Subscriber, n.Handler}
		nowKeys = append(nowKeys, k)
		var now *planfile.Type
		if t, ok := subscriberType(p, n); ok {
			pt := planfile.NewType(t)
			now = &pt
		}
		was, listed := wasType[k]
		switch {
		case !listed:
			diffs = append(diffs, text(k)+" is due and the plan does not list it")
		case (was == nil) != (now == nil) || (was != nil && *was != *now):
			diffs = append(diffs, fmt.Sprintf("%s: the subscriber has type %s and the plan looks its hook up by %s", text(k), typePtrText(now), typePtrText(was)))
		}
	}
	for _, k := range wasKeys {
		if !slices.Contains(nowKeys, k) {
			diffs = append(diffs, "the plan lists "+text(k)+", which the model does not imply")
		}
	}
	if len(diffs) == 0 && !slices.Equal(wasKeys, nowKeys) {
		diffs = append(diffs, "the plan lists the notifications in another order than the model gives, or one twice")
	}
	return diffs
}

func typeText(t planfile.Type) string {
	s := t.Name
	if t.Version != "" {
		s += "/" + t.Version
	}
	if t.Package != "" {
		s += "@" + t.Package
	}
	return orNone(s)
}

func typePtrText(t *planfile.Type) string {
	if t == nil {
		return "none (no subscriber)"
	}
	return typeText(*t)
}

// Applied returns what a saved plan sp whose inputs changed says of the
// inputs now: left, the objects it lists that are still alive in them
// (in the snapshot or the incoming tree, not flagged destroyed), and
// whether it was applied already: it lists something, none of its objects
// is alive, none of its dropped objects is still there, and the plan p
// of the inputs now has nothing to do (nothing doomed, nothing dropped).
// The inputs' sha256 cannot tell: the apply that carried the plan out
// rewrote the model.
func Applied(sp *planfile.File, in *Inputs, p *order.Plan) (left []string, applied bool) {
	alive := func(t *snapshot.Tree, id string) (present, isAlive bool) {
		if t == nil {
			return false, false
		}
		j, ok := t.Lookup(id)
		if !ok {
			return false, false
		}
		return true, !t.Objects[j].Destroyed()
	}
	n := 0
	for _, g := range sp.Groups {
		for _, o := range g.Objects {
			n++
			_, a1 := alive(in.Snapshot, o.ID)
			_, a2 := alive(in.Incoming, o.ID)
			if a1 || a2 {
				left = append(left, o.ID)
			}
		}
	}
	droppedLeft := false
	for _, d := range sp.Dropped {
		p1, _ := alive(in.Snapshot, d.ID)
		p2, _ := alive(in.Incoming, d.ID)
		droppedLeft = droppedLeft || p1 || p2
	}
	applied = n+len(sp.Dropped) > 0 && len(left) == 0 && !droppedLeft &&
		len(p.Objects) == 0 && len(p.Diff.Dropped) == 0
	return left, applied
}
