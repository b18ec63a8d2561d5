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
	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/internal/atomicfile"
	"github.com/objgc/objgc/internal/termsafe"
	"github.com/objgc/objgc/snapshot"
)

// PlanFormatVersion is the "format_version" of JSON plans
// (destroy.PlanFormatVersion).
const PlanFormatVersion = destroy.PlanFormatVersion

// planHooks are the hooks a plan would run (destroy.Prepare), and what
// the JSON and text plans say of them: where objgc looked, the packages
// read, each hook's sha256, and how many hooks apply refuses to run.
type planHooks struct {
	*destroy.PlanHooks
	sums     *destroy.HookSums
	dirs     []string              // the hooks dirs searched, absolute
	cacheDir string                // the package cache root, absolute
	packages []destroy.PlanPackage // the cached packages read
	// planned holds, by index into Types, its destroy hooks as the JSON
	// plan lists them (with sha256); nil until needed.
	planned [][]destroy.PlanHook
	// refusals are why apply would refuse the plan
	// (destroy.Prepared.Refusals with settings), never nil.
	refusals []destroy.Refusal
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
		packages:  []destroy.PlanPackage{},
		planned:   make([][]destroy.PlanHook, len(prep.Hooks.Types)),
		refusals:  prep.Refusals(s),
		settings:  s,
	}
	if h.refusals == nil {
		h.refusals = []destroy.Refusal{}
	}
	if len(f.Dirs) > 0 || f.Packages != nil {
		h.packages = destroy.SessionPackages(f.Packages)
	}
	return h
}

// planJSON is the JSON plan (destroy.PlanFile, docs/plan-format.md) of a
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

func (pj *planJSON) inputs() []destroy.PlanInput {
	input := func(role string, doc *snapshot.Document) destroy.PlanInput {
		path := doc.Name
		if path != stdinName {
			path = absPath(path)
		}
		return destroy.PlanInput{Role: role, Path: path, SHA256: doc.SHA256()}
	}
	if pj.in.Model != nil {
		return []destroy.PlanInput{input("model", pj.in.Model)}
	}
	return []destroy.PlanInput{input("snapshot", pj.in.SnapshotFile), input("graph", pj.in.GraphFile)}
}

func (pj *planJSON) hooksDirs() []string {
	if pj.hooks.dirs == nil {
		return []string{}
	}
	return pj.hooks.dirs
}

// object returns Plan.Objects[i] as the plan lists it.
func (pj *planJSON) object(i int) destroy.PlanObject {
	o := pj.p.Object(i)
	kind := pj.hooks.Kind(i)
	k := pj.hooks.Types[kind]
	po := destroy.PlanObject{ID: o.ID, Type: o.Type, Path: o.Path, Reasons: o.Reasons, TypeRef: destroy.NewPlanType(k.Type), Classes: k.Classes, Hooks: pj.planned(kind)}
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
func (pj *planJSON) planned(kind int32) []destroy.PlanHook {
	h := pj.hooks
	if h.planned[kind] == nil {
		k := h.Types[kind]
		h.planned[kind] = make([]destroy.PlanHook, 0, len(k.Destroy))
		for _, f := range k.Destroy {
			h.planned[kind] = append(h.planned[kind], h.sums.Hook(f))
		}
	}
	return h.planned[kind]
}

func (pj *planJSON) notification(i int) destroy.PlanNotification {
	n := pj.p.Notifications[i]
	pn := destroy.PlanNotification{Group: n.Group, Publisher: pj.p.ID(n.Publisher), Subscriber: n.Subscriber, Handler: n.Handler,
		OldPlaces: pj.hooks.OldNotify[i]}
	if t := pj.hooks.SubscriberTypes[i]; t != nil {
		pt := destroy.NewPlanType(*t)
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

func (pj *planJSON) dropped(i int) destroy.PlanDropped {
	inc := pj.p.Diff.Incoming
	j := pj.p.Diff.Dropped[i]
	return destroy.PlanDropped{ID: inc.ID(j), Type: inc.TypeString(j), Path: inc.ObjectPath(j)}
}

func (pj *planJSON) summary() destroy.PlanSummary {
	p := pj.p
	return destroy.PlanSummary{
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
func (pj *planJSON) document() *destroy.PlanFile {
	p := pj.p
	d := &destroy.PlanFile{
		FormatVersion: PlanFormatVersion,
		Inputs:        pj.inputs(),
		OnDangling:    pj.onDangling,
		NoHooks:       pj.settings().NoHooks,
		RequireHooks:  pj.settings().RequireHooks,
		HooksDirs:     pj.hooksDirs(),
		CacheDir:      pj.hooks.cacheDir,
		Packages:      pj.hooks.packages,
		Groups:        make([]destroy.PlanGroup, 0, len(p.Groups)),
		Notifications: make([]destroy.PlanNotification, 0, len(p.Notifications)),
		Cycles:        make([][]string, 0, len(p.Cycles)),
		Dropped:       make([]destroy.PlanDropped, 0, len(p.Diff.Dropped)),
		Warnings:      p.AllWarnings(),
		Summary:       pj.summary(),
	}
	if d.Warnings == nil {
		d.Warnings = []order.Warning{}
	}
	for _, g := range p.Groups {
		pg := destroy.PlanGroup{Index: g.Index, Objects: make([]destroy.PlanObject, 0, len(g.Objects))}
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

// write streams the JSON plan to w (destroy.WritePlanJSON), every path
// absolute.
func (pj *planJSON) write(w io.Writer) error { return pj.writeBase(w, "") }

// writeBase streams the JSON plan to w (destroy.WritePlanJSON), the
// paths under base (the saved plan's directory, "" for none) relative to
// it. The objects are rendered in parallel (renderOrdered): what
// pj.object fills in lazily is filled in first.
func (pj *planJSON) writeBase(w io.Writer, base string) error {
	p := pj.p
	for kind := range pj.hooks.Types {
		pj.planned(int32(kind))
	}
	docs := pj.in.Docs()
	return destroy.WritePlanJSON(w, &destroy.PlanElems{
		Head: destroy.PlanFile{FormatVersion: PlanFormatVersion, Inputs: pj.inputs(), OnDangling: pj.onDangling,
			NoHooks: pj.settings().NoHooks, RequireHooks: pj.settings().RequireHooks,
			HooksDirs: pj.hooksDirs(), CacheDir: pj.hooks.cacheDir, Packages: pj.hooks.packages, Summary: pj.summary()},
		Base:   base,
		Groups: destroy.Elems{N: len(p.Groups)},
		Group: func(k int) (int, destroy.Elems) {
			return p.Groups[k].Index, destroy.Elems{N: len(p.Groups[k].Objects)}
		},
		Object:        func(k, j int) destroy.PlanObject { return pj.object(int(p.Groups[k].Objects[j])) },
		Notifications: destroy.Elems{N: len(p.Notifications)},
		Notification:  pj.notification,
		Cycles:        destroy.Elems{N: len(p.Cycles)},
		Cycle:         pj.cycle,
		Dropped:       destroy.Elems{N: len(p.Diff.Dropped)},
		DroppedAt:     pj.dropped,
		Warnings:      destroy.Elems{N: p.WarningCount()},
		Warning:       p.Warning,
		Parallel: func(w io.Writer, n int, render func(b *bytes.Buffer, i int)) error {
			return renderOrdered(w, docs, n, render)
		},
	})
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

func writePlanText(w io.Writer, pal *palette, in *inputs, p *order.Plan, onDangling string, hooks *planHooks) error {
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
	// Each group's heading and then its objects, one item each, rendered
	// in parallel in that order.
	var groupStart []int // the item of each group's heading
	n := 0
	for _, g := range p.Groups {
		groupStart = append(groupStart, n)
		n += 1 + len(g.Objects)
	}
	if err := renderOrdered(bw, in.Docs(), n, func(b *bytes.Buffer, k int) {
		g := sort.Search(len(groupStart), func(g int) bool { return groupStart[g] > k }) - 1
		if k == groupStart[g] {
			fmt.Fprintf(b, "\n%s\n", pal.heading(fmt.Sprintf("group %d", p.Groups[g].Index)))
			return
		}
		writeObjectText(b, pal, p, hooks, int(p.Groups[g].Objects[k-groupStart[g]-1]))
	}); err != nil {
		return err
	}
	if len(p.Notifications) > 0 {
		fmt.Fprintf(bw, "\n%s\n", pal.heading("Notifications, before any destroy:"))
		for i, n := range p.Notifications {
			path, problem := "", ""
			h := hooks.Notify[i]
			if h != nil {
				path, problem = h.Path, foundProblem(*h)
			}
			writeNotificationLines(bw, pal, i, n.Subscriber, n.Handler, p.ID(n.Publisher), n.Group, h != nil, path, problem, hooks.OldNotify[i])
		}
	}
	if len(p.Diff.Dropped) > 0 {
		inc := p.Diff.Incoming
		fmt.Fprintf(bw, "\n%s\n", pal.heading("Dropped without hooks (destroyed before, no longer referenced):"))
		for _, i := range p.Diff.Dropped {
			fmt.Fprintf(bw, "  %s %s  %s\n", term(orDash(inc.TypeString(i))), pal.id(term(inc.ID(i))), pal.dim(term(inc.ObjectPath(i))))
		}
	}
	if p.WarningCount() > 0 {
		fmt.Fprintf(bw, "\n%s\n", pal.heading("Warnings:"))
		for k := range p.WarningCount() {
			wn := p.Warning(k)
			fmt.Fprintf(bw, "  %s %s\n", pal.warn(wn.Code+":"), term(wn.Message))
		}
	}
	writeTextSummary(bw, pal, newPlanJSON(in, p, onDangling, hooks).summary(), onDangling)
	return bw.Flush()
}

// writeObjectText writes Plan.Objects[i] as the text plan lists it: type,
// id and path, reasons, class hierarchy, destroy hooks.
func writeObjectText(b *bytes.Buffer, pal *palette, p *order.Plan, hooks *planHooks, i int) {
	o := p.Object(i)
	k := hooks.Of(i)
	writeObjectHead(b, pal, o.Type, o.ID, o.Path, o.Reasons, k.Classes, k.Package)
	writeDestroyHooks(b, pal, len(k.Destroy), func(j int) (string, string) { return k.Destroy[j].Path, foundProblem(k.Destroy[j]) })
}

// foundProblem is why f cannot run, "" when it can.
func foundProblem(f hook.Found) string {
	if f.Err != nil {
		return f.Err.Error()
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
func writeDot(w io.Writer, p *order.Plan) error {
	bw := bufio.NewWriter(w)
	writeDotHead(bw)
	for _, g := range p.Groups {
		writeDotGroup(bw, g.Index, len(g.Objects), func(k int) (class, id string) {
			o := p.Header(int(g.Objects[k]))
			return o.Class, o.ID
		})
	}
	// Edges in destruction order, as the groups list the objects, so that
	// a saved plan, which keeps that order, draws the same graph.
	for _, g := range p.Groups {
		for _, i := range g.Objects {
			writeDotEdges(bw, p.ID(int(i)), p.Reasons(int(i)))
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
