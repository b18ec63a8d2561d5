package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

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

// planHooks are the hooks a plan would run (destroy.FindHooks), and what
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
	// refusals counts the hooks apply refuses to run: they cannot be
	// given their arguments or others could change them.
	refusals int
}

// newPlanHooks is what the printed plan says of prep's hooks, found by f.
func newPlanHooks(prep *destroy.Prepared, f *destroy.HookFinder, cacheDir string) *planHooks {
	h := &planHooks{
		PlanHooks: prep.Hooks,
		sums:      destroy.NewHookSums(),
		dirs:      absPaths(f.Dirs),
		cacheDir:  absPath(cacheDir),
		packages:  []destroy.PlanPackage{},
		planned:   make([][]destroy.PlanHook, len(prep.Hooks.Types)),
		refusals:  prep.Refusals,
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
		ApplyRefuses:       pj.onDangling == "error" && len(p.Diff.Dangling) > 0 || pj.hooks.refusals > 0,
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

// write streams the JSON plan to w (writePlanJSON). The objects are
// rendered in parallel: what pj.object fills in lazily is filled in
// first.
func (pj *planJSON) write(w io.Writer) error {
	p := pj.p
	for kind := range pj.hooks.Types {
		pj.planned(int32(kind))
	}
	return writePlanJSON(w, &planElems{
		head: destroy.PlanFile{FormatVersion: PlanFormatVersion, Inputs: pj.inputs(), OnDangling: pj.onDangling,
			HooksDirs: pj.hooksDirs(), CacheDir: pj.hooks.cacheDir, Packages: pj.hooks.packages, Summary: pj.summary()},
		groups: elems{n: len(p.Groups)},
		group: func(k int) (int, elems) {
			return p.Groups[k].Index, elems{n: len(p.Groups[k].Objects)}
		},
		object:        func(k, j int) destroy.PlanObject { return pj.object(int(p.Groups[k].Objects[j])) },
		notifications: elems{n: len(p.Notifications)},
		notification:  pj.notification,
		cycles:        elems{n: len(p.Cycles)},
		cycle:         pj.cycle,
		dropped:       elems{n: len(p.Diff.Dropped)},
		droppedAt:     pj.dropped,
		warnings:      elems{n: p.WarningCount()},
		warning:       p.Warning,
		docs:          pj.in.Docs(),
	})
}

// savedPlanJSON writes the saved plan sp as JSON (writePlanJSON): objgc
// show --format json.
func savedPlanJSON(w io.Writer, sp *destroy.PlanFile) error {
	of := func(n int, isNil bool) elems { return elems{n: n, null: isNil} }
	return writePlanJSON(w, &planElems{
		head:   *sp,
		groups: of(len(sp.Groups), sp.Groups == nil),
		group: func(k int) (int, elems) {
			g := &sp.Groups[k]
			return g.Index, of(len(g.Objects), g.Objects == nil)
		},
		object:        func(k, j int) destroy.PlanObject { return sp.Groups[k].Objects[j] },
		notifications: of(len(sp.Notifications), sp.Notifications == nil),
		notification:  func(i int) destroy.PlanNotification { return sp.Notifications[i] },
		cycles:        of(len(sp.Cycles), sp.Cycles == nil),
		cycle:         func(i int) []string { return sp.Cycles[i] },
		dropped:       of(len(sp.Dropped), sp.Dropped == nil),
		droppedAt:     func(i int) destroy.PlanDropped { return sp.Dropped[i] },
		warnings:      of(len(sp.Warnings), sp.Warnings == nil),
		warning:       func(i int) order.Warning { return sp.Warnings[i] },
	})
}

// elems is the length of one of a plan's arrays; null: it is absent
// (nil), written null as encoding/json writes a nil slice.
type elems struct {
	n    int
	null bool
}

// planElems is what writePlanJSON reads of a plan, element by element:
// a plan being made (planJSON.write) or a saved one (savedPlanJSON).
type planElems struct {
	// head holds the fields before the groups and the summary; its
	// arrays are not read.
	head          destroy.PlanFile
	groups        elems
	group         func(k int) (index int, objects elems)
	object        func(k, j int) destroy.PlanObject // object j of group k
	notifications elems
	notification  func(i int) destroy.PlanNotification
	cycles        elems
	cycle         func(i int) []string
	dropped       elems
	droppedAt     func(i int) destroy.PlanDropped
	warnings      elems
	warning       func(i int) order.Warning
	// docs are the documents the elements read (jsonStream.docs).
	docs []*snapshot.Document
}

// writePlanJSON is the one encoder of the JSON plan (docs/plan-format.md):
// the bytes encoding/json writes of the whole destroy.PlanFile (indented
// by two spaces, HTML characters not escaped), unprintable runes as \u
// escapes, streamed one element of the groups, objects, notifications,
// cycles, dropped and warnings arrays at a time through a buffer of 64
// KiB, the objects and notifications rendered in parallel by the hand
// encoder (appendPlanObject). Its memory is that of the largest element,
// not of the plan.
func writePlanJSON(w io.Writer, e *planElems) error {
	s := newJSONStream(w)
	s.docs = e.docs
	s.raw("{\n")
	s.field("format_version", e.head.FormatVersion)
	s.field("inputs", e.head.Inputs)
	s.field("on_dangling", e.head.OnDangling)
	s.field("hooks_dirs", e.head.HooksDirs)
	s.field("cache_dir", e.head.CacheDir)
	s.field("packages", e.head.Packages)
	s.key("groups")
	s.array("  ", e.groups, func(prefix string, k int) {
		index, objects := e.group(k)
		s.raw("{\n" + prefix + "  \"index\": " + strconv.Itoa(index) + ",\n" + prefix + "  \"objects\": ")
		s.parallelArray(prefix+"  ", objects, func(b []byte, prefix string, j int) []byte {
			po := e.object(k, j)
			return appendPlanObject(b, prefix, &po)
		})
		s.raw("\n" + prefix + "}")
	})
	s.raw(",\n")
	s.key("notifications")
	s.parallelArray("  ", e.notifications, func(b []byte, prefix string, i int) []byte {
		pn := e.notification(i)
		return appendPlanNotification(b, prefix, &pn)
	})
	s.raw(",\n")
	s.key("cycles")
	s.array("  ", e.cycles, func(prefix string, i int) { s.value(prefix, e.cycle(i)) })
	s.raw(",\n")
	s.key("dropped")
	s.array("  ", e.dropped, func(prefix string, i int) { s.value(prefix, e.droppedAt(i)) })
	s.raw(",\n")
	s.key("warnings")
	s.array("  ", e.warnings, func(prefix string, i int) { s.value(prefix, e.warning(i)) })
	s.raw(",\n")
	s.key("summary")
	s.value("  ", e.head.Summary)
	s.raw("\n}\n")
	return s.flush()
}

// jsonStream writes indented JSON piece by piece: fixed keys and
// punctuation as they are, each value through encoding/json (indented by
// two spaces after a prefix, HTML characters not escaped) and
// termsafe.JSON, as writeJSON does for a whole value. The first error
// stops it; flush returns it.
type jsonStream struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder
	err error
	// docs are the documents parallelArray's elements read.
	docs []*snapshot.Document
}

func newJSONStream(w io.Writer) *jsonStream {
	s := &jsonStream{w: bufio.NewWriterSize(w, 64<<10)}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	return s
}

func (s *jsonStream) raw(t string) {
	if s.err == nil {
		_, s.err = s.w.WriteString(t)
	}
}

// key writes a key of the root object (keys are fixed ASCII names).
func (s *jsonStream) key(k string) { s.raw("  \"" + k + "\": ") }

// field writes a key of the root object, its value and a comma.
func (s *jsonStream) field(k string, v any) {
	s.key(k)
	s.value("  ", v)
	s.raw(",\n")
}

// value writes v as encoding/json indents it at prefix.
func (s *jsonStream) value(prefix string, v any) {
	if s.err != nil {
		return
	}
	s.buf.Reset()
	s.enc.SetIndent(prefix, "  ")
	if s.err = s.enc.Encode(v); s.err != nil {
		return
	}
	b := bytes.TrimSuffix(s.buf.Bytes(), []byte("\n"))
	_, s.err = s.w.Write(termsafe.JSON(b))
}

// array writes an array of a.n elements whose brackets sit at prefix;
// elem writes element i, its first line already indented, at the prefix
// it is given. Empty, it is [], and null when a.null, as encoding/json
// writes them.
func (s *jsonStream) array(prefix string, a elems, elem func(prefix string, i int)) {
	n := a.n
	switch {
	case a.null:
		s.raw("null")
		return
	case n == 0:
		s.raw("[]")
		return
	}
	s.raw("[\n")
	inner := deeper(prefix)
	for i := range n {
		if i > 0 {
			s.raw(",\n")
		}
		s.raw(inner)
		if s.err != nil {
			return
		}
		elem(inner, i)
	}
	s.raw("\n" + prefix + "]")
}

// parallelArray is array for a.n elements that elem appends, as value would
// write them (elem appends element i's JSON, its first line already
// indented, at the prefix it is given): the elements are rendered on
// several goroutines (renderOrdered) and passed through termsafe.JSON as
// value passes its values. elem must be safe to call from several
// goroutines at once.
func (s *jsonStream) parallelArray(prefix string, a elems, elem func(b []byte, prefix string, i int) []byte) {
	n := a.n
	switch {
	case a.null:
		s.raw("null")
		return
	case n == 0:
		s.raw("[]")
		return
	}
	s.raw("[\n")
	if s.err != nil {
		return
	}
	inner := deeper(prefix)
	bufs := sync.Pool{New: func() any { return new([]byte) }}
	err := renderOrdered(s.w, s.docs, n, func(b *bytes.Buffer, i int) {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(inner)
		e := bufs.Get().(*[]byte)
		*e = elem((*e)[:0], inner, i)
		b.Write(termsafe.JSON(*e))
		bufs.Put(e)
	})
	if s.err == nil {
		s.err = err
	}
	s.raw("\n" + prefix + "]")
}

func (s *jsonStream) flush() error {
	if s.err != nil {
		return s.err
	}
	return s.w.Flush()
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

// writePlanFile saves the JSON plan atomically, streamed (planJSON.write):
// a temporary file in the same folder, fsync, rename, fsync of the folder.
func writePlanFile(path string, pj *planJSON) error {
	return writeFileAtomic(path, 0o644, pj.write)
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
	writeTextSummary(bw, pal, newPlanJSON(in, p, onDangling, hooks).summary(), hooks.refusals, onDangling)
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
