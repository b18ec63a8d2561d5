package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fatih/color"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/destroy/planfile"
	"github.com/objgc/objgc/internal/atomicfile"
	"github.com/objgc/objgc/internal/termsafe"
	"github.com/objgc/objgc/snapshot"
)

// PlanFormatVersion is the "format_version" of JSON plans
// (planfile.FormatVersion).
const PlanFormatVersion = planfile.FormatVersion

// planHooks are the hooks a plan would run (destroy.Prepare), and what
// the JSON and text plans say of them: where objgc looked, the packages
// read, each hook's sha256, and how many hooks apply refuses to run.
type planHooks struct {
	*destroy.PlanHooks
	sums     *destroy.HookSums
	dirs     []string           // the hooks dirs searched, absolute
	cacheDir string             // the package cache root, absolute
	packages []planfile.Package // the cached packages read
	// planned holds, by index into Types, its destroy hooks as the JSON
	// plan lists them (with sha256); nil until needed.
	planned [][]planfile.Hook
	// refusals are why apply would refuse the plan
	// (destroy.Prepared.Refusals with settings), never nil.
	refusals []planfile.Refusal
	settings destroy.RefusalSettings
}

// newPlanHooks is what the printed plan says of prep's hooks, found by f,
// and of apply's refusals with settings s.
func newPlanHooks(prep *destroy.Prepared, f *destroy.HookFinder, cacheDir string, s destroy.RefusalSettings) *planHooks {
	h := &planHooks{
		PlanHooks: prep.Hooks,
		sums:      destroy.NewHookSums(),
		dirs:      absPaths(f.Dirs),
		cacheDir:  absPath(cacheDir),
		packages:  []planfile.Package{},
		planned:   make([][]planfile.Hook, len(prep.Hooks.Types)),
		refusals:  prep.Refusals(s),
		settings:  s,
	}
	if h.refusals == nil {
		h.refusals = []planfile.Refusal{}
	}
	if len(f.Dirs) > 0 || f.Packages != nil {
		h.packages = destroy.SessionPackages(f.Packages)
	}
	return h
}

// planJSON is the JSON plan (planfile.File, docs/plan-format.md) of a
// plan: write streams it, element by element, so that its memory is that
// of one object whatever the number of objects; document builds it whole.
// Both give the same bytes as encoding/json on the whole PlanFile.
type planJSON struct {
	in         *inputs
	p          *order.Plan
	onDangling string
	hooks      *planHooks
}

func newPlanJSON(in *inputs, p *order.Plan, onDangling string, hooks *planHooks) *planJSON {
	return &planJSON{in: in, p: p, onDangling: onDangling, hooks: hooks}
}

// settings are the apply settings the plan records: --no-hooks and
// --require-hooks.
func (pj *planJSON) settings() destroy.RefusalSettings { return pj.hooks.settings }

func (pj *planJSON) inputs() []planfile.Input {
	input := func(role string, doc *snapshot.Document) planfile.Input {
		path := doc.Name
		if path != stdinName {
			path = absPath(path)
		}
		return planfile.Input{Role: role, Path: path, SHA256: doc.SHA256()}
	}
	if pj.in.Model != nil {
		return []planfile.Input{input("model", pj.in.Model)}
	}
	return []planfile.Input{input("snapshot", pj.in.SnapshotFile), input("graph", pj.in.GraphFile)}
}

func (pj *planJSON) hooksDirs() []string {
	if pj.hooks.dirs == nil {
		return []string{}
	}
	return pj.hooks.dirs
}

// object returns Plan.Objects[i] as the plan lists it.
func (pj *planJSON) object(i int) planfile.Object {
	o := pj.p.Object(i)
	kind := pj.hooks.Kind(i)
	k := pj.hooks.Types[kind]
	po := planfile.Object{ID: o.ID, Type: o.Type, Path: o.Path, Reasons: o.Reasons, TypeRef: planfile.NewType(k.Type), Classes: k.Classes, Hooks: pj.planned(kind)}
	if po.Classes == nil {
		po.Classes = k.Own
	}
	if k.Package != "" {
		pkg := k.Package
		po.Package = &pkg
	}
	if o.Owner != "" {
		owner := o.Owner
		po.Owner = &owner
	}
	return po
}

// planned returns the destroy hooks of type kind as the JSON plan lists
// them (with their sha256), computed on first use.
func (pj *planJSON) planned(kind int32) []planfile.Hook {
	h := pj.hooks
	if h.planned[kind] == nil {
		k := h.Types[kind]
		h.planned[kind] = make([]planfile.Hook, 0, len(k.Destroy))
		for _, f := range k.Destroy {
			h.planned[kind] = append(h.planned[kind], h.sums.Hook(f))
		}
	}
	return h.planned[kind]
}

func (pj *planJSON) notification(i int) planfile.Notification {
	n := pj.p.Notifications[i]
	pn := planfile.Notification{Group: n.Group, Publisher: pj.p.ID(n.Publisher), Subscriber: n.Subscriber, Handler: n.Handler,
		OldPlaces: pj.hooks.OldNotify[i]}
	if t := pj.hooks.SubscriberTypes[i]; t != nil {
		pt := planfile.NewType(*t)
		pn.SubscriberTypeRef = &pt
	}
	if f := pj.hooks.Notify[i]; f != nil {
		h := pj.hooks.sums.Hook(*f)
		pn.Hook = &h
	}
	return pn
}

func (pj *planJSON) cycle(i int) []string {
	c := pj.p.Cycles[i]
	ids := make([]string, len(c))
	for k, j := range c {
		ids[k] = pj.p.ID(j)
	}
	return ids
}

func (pj *planJSON) dropped(i int) planfile.Dropped {
	inc := pj.p.Diff.Incoming
	j := pj.p.Diff.Dropped[i]
	return planfile.Dropped{ID: inc.ID(j), Type: inc.TypeString(j), Path: inc.ObjectPath(j)}
}

func (pj *planJSON) summary() planfile.Summary {
	p := pj.p
	return planfile.Summary{
		SnapshotObjects:    p.Diff.Snapshot.Len(),
		IncomingObjects:    p.Diff.Incoming.Len(),
		Destroy:            len(p.Objects),
		Groups:             len(p.Groups),
		Notifications:      len(p.Notifications),
		DanglingReferences: len(p.Diff.Dangling),
		Dropped:            len(p.Diff.Dropped),
		Warnings:           p.WarningCount(),
		WithoutDestroyHook: pj.hooks.WithoutDestroyHook(),
		ApplyRefuses:       len(pj.hooks.refusals) > 0,
		Refusals:           pj.hooks.refusals,
	}
}

// document builds the whole PlanFile, for a reader that needs it at once;
// write streams the same.
func (pj *planJSON) document() *planfile.File {
	p := pj.p
	d := &planfile.File{
		FormatVersion: PlanFormatVersion,
		Inputs:        pj.inputs(),
		OnDangling:    pj.onDangling,
		NoHooks:       pj.settings().NoHooks,
		RequireHooks:  pj.settings().RequireHooks,
		HooksDirs:     pj.hooksDirs(),
		CacheDir:      pj.hooks.cacheDir,
		Packages:      pj.hooks.packages,
		Groups:        make([]planfile.Group, 0, len(p.Groups)),
		Notifications: make([]planfile.Notification, 0, len(p.Notifications)),
		Cycles:        make([][]string, 0, len(p.Cycles)),
		Dropped:       make([]planfile.Dropped, 0, len(p.Diff.Dropped)),
		Warnings:      p.AllWarnings(),
		Summary:       pj.summary(),
	}
	if d.Warnings == nil {
		d.Warnings = []order.Warning{}
	}
	for _, g := range p.Groups {
		pg := planfile.Group{Index: g.Index, Objects: make([]planfile.Object, 0, len(g.Objects))}
		for _, i := range g.Objects {
			pg.Objects = append(pg.Objects, pj.object(int(i)))
		}
		d.Groups = append(d.Groups, pg)
	}
	for i := range p.Notifications {
		d.Notifications = append(d.Notifications, pj.notification(i))
	}
	for i := range p.Cycles {
		d.Cycles = append(d.Cycles, pj.cycle(i))
	}
	for i := range p.Diff.Dropped {
		d.Dropped = append(d.Dropped, pj.dropped(i))
	}
	return d
}

// write streams the JSON plan to w (planfile.WriteJSON), every path
// absolute.
func (pj *planJSON) write(w io.Writer) error { return pj.writeBase(w, "") }

// writeBase streams the JSON plan to w (planfile.WriteJSON), the
// paths under base (the saved plan's directory, "" for none) relative to
// it. The objects are rendered in parallel (renderOrdered): what
// pj.object fills in lazily is filled in first.
func (pj *planJSON) writeBase(w io.Writer, base string) error {
	e := pj.view()
	e.Base = base
	e.Head = planfile.File{FormatVersion: PlanFormatVersion, Inputs: pj.inputs(), OnDangling: pj.onDangling,
		NoHooks: pj.settings().NoHooks, RequireHooks: pj.settings().RequireHooks,
		HooksDirs: pj.hooksDirs(), CacheDir: pj.hooks.cacheDir, Packages: pj.hooks.packages, Summary: pj.summary()}
	return planfile.WriteJSON(w, e)
}

// view is the plan as the view every format writes from
// (planfile.View). Its Head holds the on_dangling mode and the
// summary only: the rest (the inputs' sha256, a pass over every byte of
// them) is for the JSON plan, which fills it in (writeBase). Its elements
// may be asked for from several goroutines at once: what pj.object fills
// in lazily is filled in first.
func (pj *planJSON) view() *planfile.View {
	p := pj.p
	for kind := range pj.hooks.Types {
		pj.planned(int32(kind))
	}
	docs := pj.in.Docs()
	return &planfile.View{
		Head:   planfile.File{OnDangling: pj.onDangling, Summary: pj.summary()},
		Groups: planfile.Array{N: len(p.Groups)},
		Group: func(k int) (int, planfile.Array) {
			return p.Groups[k].Index, planfile.Array{N: len(p.Groups[k].Objects)}
		},
		Object:        func(k, j int) planfile.Object { return pj.object(int(p.Groups[k].Objects[j])) },
		Notifications: planfile.Array{N: len(p.Notifications)},
		Notification:  pj.notification,
		Cycles:        planfile.Array{N: len(p.Cycles)},
		Cycle:         pj.cycle,
		Dropped:       planfile.Array{N: len(p.Diff.Dropped)},
		DroppedAt:     pj.dropped,
		Warnings:      planfile.Array{N: p.WarningCount()},
		Warning:       p.Warning,
		Parallel: func(w io.Writer, n int, render func(b *bytes.Buffer, i int)) error {
			return renderOrdered(w, docs, n, render)
		},
	}
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

// writePlanFile saves the JSON plan atomically, streamed
// (planJSON.writeBase): a temporary file in the same folder, fsync,
// rename, fsync of the folder. What lies under the plan file's folder is
// named relative to it, so that the plan travels with its workspace.
func writePlanFile(path string, pj *planJSON) error {
	base, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return err
	}
	return writeFileAtomic(path, 0o644, func(w io.Writer) error { return pj.writeBase(w, base) })
}

// writeFileAtomic writes path atomically (atomicfile.Write).
func writeFileAtomic(path string, mode os.FileMode, write func(io.Writer) error) error {
	return atomicfile.Write(path, mode, write)
}

// palette colours text output; every colour is off unless stdout is a
// terminal that is not TERM=dumb and neither NO_COLOR nor --no-color is set
// (docs/config.md; no-color.org): escape codes must never reach a file, a
// pipe or a terminal that cannot show them.
type palette struct {
	heading, id, dim, warn, bad func(a ...any) string
}

func newPalette(streams *IO, noColor bool) *palette {
	on := streams.IsTTYOut && !noColor && streams.Getenv("NO_COLOR") == "" && streams.Getenv("TERM") != "dumb"
	mk := func(attrs ...color.Attribute) func(a ...any) string {
		if !on {
			// What a disabled color.Color's Sprint writes, without
			// its fmt.Sprint for the one string a plan passes (a
			// hundred thousand objects' lines call these).
			return func(a ...any) string {
				if len(a) == 1 {
					if s, ok := a[0].(string); ok {
						return s
					}
				}
				return fmt.Sprint(a...)
			}
		}
		c := color.New(attrs...)
		c.EnableColor()
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

// writePlanText writes the text plan of e, the view of a plan just made
// or of a saved one (planfile.View), its inputs named names: the one
// text writer of plan and show. The objects are rendered in parallel
// when e says how (PlanElems.Parallel).
func writePlanText(w io.Writer, pal *palette, names []string, onDangling string, e *planfile.View) error {
	bw := bufio.NewWriter(w)
	shown := make([]string, len(names))
	for i, n := range names {
		shown[i] = term(n)
	}
	s := e.Head.Summary
	fmt.Fprintf(bw, "%s %s\n", pal.heading("Plan for"), strings.Join(shown, " -> "))
	if s.Destroy == 0 {
		fmt.Fprintln(bw, "Nothing to destroy.")
	} else {
		fmt.Fprintf(bw, "Destroy %d %s in %d %s, deepest first:\n", s.Destroy, plural(s.Destroy, "object", "objects"),
			s.Groups, plural(s.Groups, "group", "groups"))
	}
	// Each group's heading and then its objects, one item each, rendered
	// in order.
	type at struct{ group, index, objects int }
	var groups []at
	var groupStart []int // the item of each group's heading
	n := 0
	for k := range e.Groups.N {
		index, objects := e.Group(k)
		groups = append(groups, at{k, index, objects.N})
		groupStart = append(groupStart, n)
		n += 1 + objects.N
	}
	parallel := e.Parallel
	if parallel == nil {
		parallel = func(w io.Writer, n int, render func(b *bytes.Buffer, i int)) error {
			return renderOrdered(w, nil, n, render)
		}
	}
	if err := parallel(bw, n, func(b *bytes.Buffer, k int) {
		g := sort.Search(len(groupStart), func(g int) bool { return groupStart[g] > k }) - 1
		if k == groupStart[g] {
			fmt.Fprintf(b, "\n%s\n", pal.heading(fmt.Sprintf("group %d", groups[g].index)))
			return
		}
		o := e.Object(g, k-groupStart[g]-1)
		pkg := ""
		if o.Package != nil {
			pkg = *o.Package
		}
		writeObjectHead(b, pal, o.Type, o.ID, o.Path, o.Reasons, o.Classes, pkg)
		writeDestroyHooks(b, pal, len(o.Hooks), func(j int) *planfile.Hook { return &o.Hooks[j] })
	}); err != nil {
		return err
	}
	if e.Notifications.N > 0 {
		fmt.Fprintf(bw, "\n%s\n", pal.heading("Notifications, before any destroy:"))
		for i := range e.Notifications.N {
			nt := e.Notification(i)
			writeNotificationLines(bw, pal, i, nt.Subscriber, nt.Handler, nt.Publisher, nt.Group, nt.Hook, nt.OldPlaces)
		}
	}
	if e.Dropped.N > 0 {
		fmt.Fprintf(bw, "\n%s\n", pal.heading("Dropped without hooks (destroyed before, no longer referenced):"))
		for i := range e.Dropped.N {
			d := e.DroppedAt(i)
			fmt.Fprintf(bw, "  %s %s  %s\n", term(orDash(d.Type)), pal.id(term(d.ID)), pal.dim(term(d.Path)))
		}
	}
	if e.Warnings.N > 0 {
		fmt.Fprintf(bw, "\n%s\n", pal.heading("Warnings:"))
		for k := range e.Warnings.N {
			wn := e.Warning(k)
			fmt.Fprintf(bw, "  %s %s\n", pal.warn(string(wn.Code)+":"), term(wn.Message))
		}
	}
	writeTextSummary(bw, pal, s, onDangling)
	return bw.Flush()
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
// writeDot writes the Graphviz graph of e, the view of a plan just made
// or of a saved one (planfile.View): the one dot writer of plan and
// show.
func writeDot(w io.Writer, e *planfile.View) error {
	bw := bufio.NewWriter(w)
	writeDotHead(bw)
	for k := range e.Groups.N {
		index, objects := e.Group(k)
		writeDotGroup(bw, index, objects.N, func(j int) (class, id string) {
			o := e.Object(k, j)
			return o.TypeRef.Name, o.ID
		})
	}
	// Edges in destruction order, as the groups list the objects, so that
	// a saved plan, which keeps that order, draws the same graph.
	for k := range e.Groups.N {
		_, objects := e.Group(k)
		for j := range objects.N {
			o := e.Object(k, j)
			writeDotEdges(bw, o.ID, o.Reasons)
		}
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}

func writeDotHead(w io.Writer) {
	fmt.Fprintln(w, "digraph objgc_plan {")
	fmt.Fprintln(w, "  rankdir=LR;")
	fmt.Fprintln(w, "  node [shape=box, fontname=\"Helvetica\"];")
}

// writeDotGroup writes group index's cluster of n objects, object(k)
// giving the class and id of the k-th.
func writeDotGroup(w io.Writer, index, n int, object func(k int) (class, id string)) {
	fmt.Fprintf(w, "  subgraph cluster_group_%d {\n    label=%s;\n", index, dotID(fmt.Sprintf("group %d", index)))
	for k := range n {
		class, id := object(k)
		fmt.Fprintf(w, "    %s [label=\"%s\\n%s\"];\n", dotID(id), dotLabel(orDash(class)), dotLabel(id))
	}
	fmt.Fprintln(w, "  }")
}

// writeDotEdges writes the edges of the object id: ownership solid
// (owned -> owner), destruction dependencies dashed (publisher ->
// subscriber), an edge ignored in a cycle red.
func writeDotEdges(w io.Writer, id string, reasons []order.Reason) {
	q := dotID
	for _, r := range reasons {
		switch r.Code {
		case order.ReasonOwnedBy:
			fmt.Fprintf(w, "  %s -> %s [style=solid];\n", q(id), q(r.ID))
		case order.ReasonSubscriber:
			fmt.Fprintf(w, "  %s -> %s [style=dashed];\n", q(id), q(r.ID))
		case order.ReasonCycle:
			fmt.Fprintf(w, "  %s -> %s [style=dashed, color=red, label=\"ignored: cycle\"];\n", q(id), q(r.ID))
		}
	}
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
