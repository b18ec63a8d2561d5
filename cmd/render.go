package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fatih/color"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/internal/atomicfile"
	"github.com/objgc/objgc/internal/termsafe"
	"github.com/objgc/objgc/snapshot"
)

// PlanFormatVersion is the "format_version" of JSON plans
// (destroy.PlanFormatVersion).
const PlanFormatVersion = destroy.PlanFormatVersion

// planHooks are the hooks a plan would run, and where it looked.
type planHooks struct {
	classes  [][]string       // by index into Plan.Objects: the class hierarchy
	pkg      []string         // by index into Plan.Objects: FullName/version of the defining package, "" if not cached
	types    []snapshot.Type  // by index into Plan.Objects: the type its hooks are looked up by
	destroy  [][]hook.Found   // by index into Plan.Objects
	subTypes []*snapshot.Type // by index into Plan.Notifications: the subscriber's type; nil: not found
	notify   []*hook.Found    // by index into Plan.Notifications; nil: none
	// oldNotify are, by index into Plan.Notifications when it has no
	// hook, files at <dir>/<C>/<handler>: where notify hooks were kept
	// before <C>/notify/<handler>. They do not run.
	oldNotify [][]string
	sums      *destroy.HookSums
	dirs      []string              // the hooks dirs searched, absolute
	cacheDir  string                // the package cache root, absolute
	packages  []destroy.PlanPackage // the cached packages read
}

// findPlanHooks looks up every hook the plan would run (DESIGN.md section
// 4): the destroy hooks of each doomed object's class hierarchy, the
// handler hook of each notification's subscriber. session, when not nil,
// is f.Packages: the packages it read are recorded.
func findPlanHooks(ctx context.Context, p *destroy.Plan, f *destroy.HookFinder, cacheDir string) *planHooks {
	h := &planHooks{
		classes:   make([][]string, len(p.Objects)),
		pkg:       make([]string, len(p.Objects)),
		types:     make([]snapshot.Type, len(p.Objects)),
		destroy:   make([][]hook.Found, len(p.Objects)),
		subTypes:  make([]*snapshot.Type, len(p.Notifications)),
		notify:    make([]*hook.Found, len(p.Notifications)),
		oldNotify: make([][]string, len(p.Notifications)),
		sums:      destroy.NewHookSums(),
		dirs:      absPaths(f.Dirs),
		cacheDir:  absPath(cacheDir),
		packages:  []destroy.PlanPackage{},
	}
	snap := p.Diff.Snapshot
	for i := range p.Objects {
		h.types[i] = snap.Objects[p.Objects[i].Snapshot].Type()
	}
	for i, n := range p.Notifications {
		if t, ok := subscriberType(p, n); ok {
			h.subTypes[i] = &t
		}
	}
	if len(f.Dirs) == 0 && f.Packages == nil {
		return h
	}
	for i := range p.Objects {
		if ctx.Err() != nil {
			return h // interrupted: the caller writes nothing
		}
		c := f.Hierarchy(ctx, h.types[i])
		h.classes[i], h.pkg[i] = c.Names, c.Package
		h.destroy[i] = f.DestroyHooks(ctx, h.types[i])
	}
	for i, n := range p.Notifications {
		if ctx.Err() != nil {
			return h
		}
		if t := h.subTypes[i]; t != nil {
			if found, ok := f.HandlerHook(ctx, *t, n.Handler); ok {
				h.notify[i] = &found
			} else {
				h.oldNotify[i] = f.OldHandlerPlaces(ctx, *t, n.Handler)
			}
		}
	}
	h.packages = destroy.SessionPackages(f.Packages)
	h.warnCannotRun(p)
	return h
}

// warnCannotRun adds to p's warnings (destroy.WarnHookCannotRun) every hook
// found that cannot run: apply would fail its object or notification.
func (h *planHooks) warnCannotRun(p *destroy.Plan) {
	for i := range p.Objects {
		o := &p.Objects[i]
		for _, f := range h.destroy[i] {
			if f.Err != nil {
				p.Warnings = append(p.Warnings, destroy.Warning{Code: destroy.WarnHookCannotRun, ID: o.ID, Path: o.Path,
					Message: fmt.Sprintf("destroy hook %s of %s cannot run (%s): apply would fail the object", f.Path, o.ID, hookErrText(f))})
			}
		}
	}
	for i, n := range p.Notifications {
		if f := h.notify[i]; f != nil && f.Err != nil {
			p.Warnings = append(p.Warnings, destroy.Warning{Code: destroy.WarnHookCannotRun, ID: n.Subscriber,
				Message: fmt.Sprintf("notify hook %s (%s of %s) cannot run (%s): the notification would fail", f.Path, n.Handler, n.Subscriber, hookErrText(*f))})
		}
	}
}

// hookErrText is why a hook found cannot run, without its path.
func hookErrText(f hook.Found) string {
	if errors.Is(f.Err, hook.ErrNotExecutable) {
		return "not executable; chmod +x it"
	}
	return strings.TrimPrefix(f.Err.Error(), f.Path+": ")
}

// withoutDestroyHook counts the doomed objects that have no destroy hook.
func (h *planHooks) withoutDestroyHook() int {
	n := 0
	for _, d := range h.destroy {
		if len(d) == 0 {
			n++
		}
	}
	return n
}

// subscriberType returns the type of a notification's subscriber: from
// the incoming model when it lives there, else from the snapshot.
func subscriberType(p *destroy.Plan, n destroy.Notification) (snapshot.Type, bool) {
	for _, t := range []*snapshot.Tree{p.Diff.Incoming, p.Diff.Snapshot} {
		if j, ok := t.Lookup(n.Subscriber); ok {
			return t.Objects[j].Type(), true
		}
	}
	return snapshot.Type{}, false
}

func newPlanDocument(in *inputs, p *destroy.Plan, onDangling string, hooks *planHooks) *destroy.PlanFile {
	d := &destroy.PlanFile{
		FormatVersion: PlanFormatVersion,
		OnDangling:    onDangling,
		Groups:        []destroy.PlanGroup{},
		Notifications: []destroy.PlanNotification{},
		Cycles:        [][]string{},
		Dropped:       []destroy.PlanDropped{},
		Warnings:      p.Warnings,
		HooksDirs:     hooks.dirs,
		CacheDir:      hooks.cacheDir,
		Packages:      hooks.packages,
	}
	if d.Warnings == nil {
		d.Warnings = []destroy.Warning{}
	}
	if d.HooksDirs == nil {
		d.HooksDirs = []string{}
	}
	input := func(role string, doc *snapshot.Document) destroy.PlanInput {
		path := doc.Name
		if path != stdinName {
			path = absPath(path)
		}
		return destroy.PlanInput{Role: role, Path: path, SHA256: doc.SHA256()}
	}
	if in.Model != nil {
		d.Inputs = []destroy.PlanInput{input("model", in.Model)}
	} else {
		d.Inputs = []destroy.PlanInput{input("snapshot", in.SnapshotFile), input("graph", in.GraphFile)}
	}
	for _, g := range p.Groups {
		pg := destroy.PlanGroup{Index: g.Index, Objects: make([]destroy.PlanObject, 0, len(g.Objects))}
		for _, i := range g.Objects {
			o := &p.Objects[i]
			po := destroy.PlanObject{ID: o.ID, Type: o.Type, Path: o.Path, Reasons: o.Reasons, TypeRef: destroy.NewPlanType(hooks.types[i]), Classes: hooks.classes[i], Hooks: []destroy.PlanHook{}}
			if po.Classes == nil {
				po.Classes = []string{}
				if o.Class != "" {
					po.Classes = []string{o.Class}
				}
			}
			if pkg := hooks.pkg[i]; pkg != "" {
				po.Package = &pkg
			}
			if o.Owner != "" {
				owner := o.Owner
				po.Owner = &owner
			}
			for _, f := range hooks.destroy[i] {
				po.Hooks = append(po.Hooks, hooks.sums.Hook(f))
			}
			pg.Objects = append(pg.Objects, po)
		}
		d.Groups = append(d.Groups, pg)
	}
	for i, n := range p.Notifications {
		pn := destroy.PlanNotification{Group: n.Group, Publisher: p.Objects[n.Publisher].ID, Subscriber: n.Subscriber, Handler: n.Handler,
			OldPlaces: hooks.oldNotify[i]}
		if t := hooks.subTypes[i]; t != nil {
			pt := destroy.NewPlanType(*t)
			pn.SubscriberTypeRef = &pt
		}
		if f := hooks.notify[i]; f != nil {
			h := hooks.sums.Hook(*f)
			pn.Hook = &h
		}
		d.Notifications = append(d.Notifications, pn)
	}
	for _, c := range p.Cycles {
		ids := make([]string, len(c))
		for k, i := range c {
			ids[k] = p.Objects[i].ID
		}
		d.Cycles = append(d.Cycles, ids)
	}
	inc := p.Diff.Incoming
	for _, i := range p.Diff.Dropped {
		o := &inc.Objects[i]
		d.Dropped = append(d.Dropped, destroy.PlanDropped{ID: o.ID, Type: o.TypeString, Path: inc.ObjectPath(i)})
	}
	d.Summary = destroy.PlanSummary{
		SnapshotObjects:    p.Diff.Snapshot.Len(),
		IncomingObjects:    inc.Len(),
		Destroy:            len(p.Objects),
		Groups:             len(p.Groups),
		Notifications:      len(p.Notifications),
		DanglingReferences: len(p.Diff.Dangling),
		Dropped:            len(p.Diff.Dropped),
		Warnings:           len(p.Warnings),
		WithoutDestroyHook: hooks.withoutDestroyHook(),
		ApplyRefuses:       onDangling == "error" && len(p.Diff.Dangling) > 0,
	}
	return d
}

// writeJSON writes v as indented JSON in which unprintable runes are \u
// escapes (termsafe.JSON): the same JSON to a reader, and safe on a
// terminal.
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termsafe.JSON(b.Bytes()))
	return err
}

// writePlanFile saves the JSON plan atomically: a temporary file in the same
// folder, fsync, rename, fsync of the folder.
func writePlanFile(path string, doc *destroy.PlanFile) error {
	return writeFileAtomic(path, 0o644, func(w io.Writer) error { return writeJSON(w, doc) })
}

// writeFileAtomic writes path atomically (atomicfile.Write).
func writeFileAtomic(path string, mode os.FileMode, write func(io.Writer) error) error {
	return atomicfile.Write(path, mode, write)
}

// palette colours text output; every colour is off unless stdout is a
// terminal that is not TERM=dumb and neither NO_COLOR nor --no-color is
// set (DESIGN.md 9; no-color.org).
type palette struct {
	heading, id, dim, warn, bad func(a ...any) string
}

func newPalette(streams *IO, noColor bool) *palette {
	on := streams.IsTTYOut && !noColor && streams.Getenv("NO_COLOR") == "" && streams.Getenv("TERM") != "dumb"
	mk := func(attrs ...color.Attribute) func(a ...any) string {
		c := color.New(attrs...)
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
		return c.SprintFunc()
	}
	return &palette{
		heading: mk(color.Bold),
		id:      mk(color.FgCyan),
		dim:     mk(color.Faint),
		warn:    mk(color.FgYellow),
		bad:     mk(color.FgRed, color.Bold),
	}
}

func writePlanText(w io.Writer, pal *palette, in *inputs, p *destroy.Plan, onDangling string, hooks *planHooks) error {
	bw := bufio.NewWriter(w)
	names := make([]string, 0, 2)
	for _, d := range in.Docs() {
		names = append(names, term(d.Name))
	}
	fmt.Fprintf(bw, "%s %s\n", pal.heading("Plan for"), strings.Join(names, " -> "))
	if len(p.Objects) == 0 {
		fmt.Fprintln(bw, "Nothing to destroy.")
	} else {
		fmt.Fprintf(bw, "Destroy %d %s in %d %s, deepest first:\n", len(p.Objects), plural(len(p.Objects), "object", "objects"),
			len(p.Groups), plural(len(p.Groups), "group", "groups"))
	}
	for _, g := range p.Groups {
		fmt.Fprintf(bw, "\n%s\n", pal.heading(fmt.Sprintf("group %d", g.Index)))
		for _, i := range g.Objects {
			o := &p.Objects[i]
			fmt.Fprintf(bw, "  %s %s  %s\n", term(orDash(o.Type)), pal.id(term(o.ID)), pal.dim(term(o.Path)))
			reasons := make([]string, len(o.Reasons))
			for k, r := range o.Reasons {
				reasons[k] = term(r.Text())
			}
			fmt.Fprintf(bw, "      %s\n", strings.Join(reasons, "; "))
			if cs := hooks.classes[i]; len(cs) > 1 {
				fmt.Fprintf(bw, "      classes: %s (package %s)\n", term(strings.Join(cs, " < ")), term(hooks.pkg[i]))
			}
			switch hs := hooks.destroy[i]; {
			case len(hs) > 0:
				for _, h := range hs {
					fmt.Fprintf(bw, "      hook destroy: %s%s\n", term(h.Path), hookProblem(h))
				}
			default:
				fmt.Fprintf(bw, "      %s\n", pal.dim("no destroy hook"))
			}
		}
	}
	if len(p.Notifications) > 0 {
		fmt.Fprintf(bw, "\n%s\n", pal.heading("Notifications, before any destroy:"))
		for i, n := range p.Notifications {
			fmt.Fprintf(bw, "  %d. %s handler %s: %s will be destroyed (group %d)\n", i+1, pal.id(term(n.Subscriber)), term(n.Handler),
				pal.id(term(p.Objects[n.Publisher].ID)), n.Group)
			if h := hooks.notify[i]; h != nil {
				fmt.Fprintf(bw, "      hook notify %s: %s%s\n", term(n.Handler), term(h.Path), hookProblem(*h))
			} else {
				fmt.Fprintf(bw, "      %s\n", pal.dim("no "+term(n.Handler)+" hook"))
			}
			for _, old := range hooks.oldNotify[i] {
				fmt.Fprintf(bw, "      %s %s does not run: notify hooks are <class>/notify/<handler>; move it to %s\n",
					pal.warn("warning:"), term(old), term(filepath.Join(filepath.Dir(old), hook.NotifyDir, n.Handler)))
			}
		}
	}
	if len(p.Diff.Dropped) > 0 {
		inc := p.Diff.Incoming
		fmt.Fprintf(bw, "\n%s\n", pal.heading("Dropped without hooks (destroyed before, no longer referenced):"))
		for _, i := range p.Diff.Dropped {
			o := &inc.Objects[i]
			fmt.Fprintf(bw, "  %s %s  %s\n", term(orDash(o.TypeString)), pal.id(term(o.ID)), pal.dim(term(inc.ObjectPath(i))))
		}
	}
	if len(p.Warnings) > 0 {
		fmt.Fprintf(bw, "\n%s\n", pal.heading("Warnings:"))
		for _, wn := range p.Warnings {
			fmt.Fprintf(bw, "  %s %s\n", pal.warn(wn.Code+":"), term(wn.Message))
		}
	}
	fmt.Fprintf(bw, "\n%d to destroy in %d %s, %d %s, %d %s, %d dropped",
		len(p.Objects), len(p.Groups), plural(len(p.Groups), "group", "groups"),
		len(p.Notifications), plural(len(p.Notifications), "notification", "notifications"),
		len(p.Warnings), plural(len(p.Warnings), "warning", "warnings"), len(p.Diff.Dropped))
	if n := hooks.withoutDestroyHook(); n > 0 {
		fmt.Fprintf(bw, ", %d without a destroy hook", n)
	}
	fmt.Fprintln(bw, ".")
	if n := len(p.Diff.Dangling); n > 0 {
		if onDangling == "error" {
			fmt.Fprintf(bw, "%s %d dangling %s to doomed objects; apply refuses to run (use --on-dangling=keep to destroy them and keep them flagged destroyed).\n",
				pal.bad("Apply would refuse:"), n, plural(n, "reference", "references"))
		} else {
			fmt.Fprintf(bw, "%d dangling %s: the referenced objects are destroyed and kept in the output flagged destroyed.\n", n, plural(n, "reference", "references"))
		}
	}
	return bw.Flush()
}

func hookProblem(f hook.Found) string {
	if f.Err != nil {
		return " (" + term(f.Err.Error()) + ")"
	}
	return ""
}

func orDash(s string) string {
	if s == "" {
		return "(no type)"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// writeDot prints the plan as a Graphviz graph: one cluster a group,
// ownership edges solid (owned -> owner), destruction dependencies dashed
// (publisher -> subscriber), edges ignored in a cycle in red.
func writeDot(w io.Writer, p *destroy.Plan) error {
	bw := bufio.NewWriter(w)
	q := dotID
	fmt.Fprintln(bw, "digraph objgc_plan {")
	fmt.Fprintln(bw, "  rankdir=LR;")
	fmt.Fprintln(bw, "  node [shape=box, fontname=\"Helvetica\"];")
	for _, g := range p.Groups {
		fmt.Fprintf(bw, "  subgraph cluster_group_%d {\n    label=%s;\n", g.Index, q(fmt.Sprintf("group %d", g.Index)))
		for _, i := range g.Objects {
			o := &p.Objects[i]
			fmt.Fprintf(bw, "    %s [label=\"%s\\n%s\"];\n", q(o.ID), dotLabel(orDash(o.Class)), dotLabel(o.ID))
		}
		fmt.Fprintln(bw, "  }")
	}
	for i := range p.Objects {
		o := &p.Objects[i]
		for _, r := range o.Reasons {
			switch r.Code {
			case destroy.ReasonOwnedBy:
				fmt.Fprintf(bw, "  %s -> %s [style=solid];\n", q(o.ID), q(r.ID))
			case destroy.ReasonSubscriber:
				fmt.Fprintf(bw, "  %s -> %s [style=dashed];\n", q(o.ID), q(r.ID))
			case destroy.ReasonCycle:
				fmt.Fprintf(bw, "  %s -> %s [style=dashed, color=red, label=\"ignored: cycle\"];\n", q(o.ID), q(r.ID))
			}
		}
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}

// dotID quotes s as a Graphviz ID: in a quoted ID only \" is an escape
// (graphviz.org/doc/info/lang.html), so escaping '"' and '\\', and
// writing unprintable runes as Go escapes, keeps distinct ids distinct and
// puts no control character or bidirectional override in the output.
func dotID(s string) string { return strconv.Quote(s) }

// dotLabel escapes s for the inside of a quoted Graphviz label, which is an
// escString (\\ is a backslash, \n a line break) in which HTML entities
// are also read: the label shows term(s), character for character.
func dotLabel(s string) string {
	t := term(s)
	t = strings.ReplaceAll(t, "\\", "\\\\")
	t = strings.ReplaceAll(t, "\"", "\\\"")
	return strings.ReplaceAll(t, "&", "&amp;")
}
