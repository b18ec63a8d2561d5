package cmd

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fatih/color"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/snapshot"
)

// PlanFormatVersion is the "format_version" of JSON plans; see
// docs/plan-format.md.
const PlanFormatVersion = "1"

// planHooks are the hooks a plan would run.
type planHooks struct {
	classes [][]string     // by index into Plan.Objects: the class hierarchy
	pkg     []string       // by index into Plan.Objects: FullName/version of the defining package, "" if not cached
	destroy [][]hook.Found // by index into Plan.Objects
	notify  []*hook.Found  // by index into Plan.Notifications; nil: none
	// oldNotify are, by index into Plan.Notifications when it has no
	// hook, files at <dir>/<C>/<handler>: where notify hooks were kept
	// before <C>/notify/<handler>. They do not run.
	oldNotify [][]string
}

// findPlanHooks looks up every hook the plan would run (DESIGN.md section
// 4): the destroy hooks of each doomed object's class hierarchy, the
// handler hook of each notification's subscriber.
func findPlanHooks(ctx context.Context, p *destroy.Plan, f *destroy.HookFinder) *planHooks {
	h := &planHooks{
		classes: make([][]string, len(p.Objects)),
		pkg:     make([]string, len(p.Objects)),
		destroy: make([][]hook.Found, len(p.Objects)),
		notify:  make([]*hook.Found, len(p.Notifications)),

		oldNotify: make([][]string, len(p.Notifications)),
	}
	if len(f.Dirs) == 0 && f.Packages == nil {
		return h
	}
	snap := p.Diff.Snapshot
	for i := range p.Objects {
		if ctx.Err() != nil {
			return h // interrupted: the caller writes nothing
		}
		t := snap.Objects[p.Objects[i].Snapshot].Type()
		c := f.Hierarchy(ctx, t)
		h.classes[i], h.pkg[i] = c.Names, c.Package
		h.destroy[i] = f.DestroyHooks(ctx, t)
	}
	for i, n := range p.Notifications {
		if ctx.Err() != nil {
			return h
		}
		if t, ok := subscriberType(p, n); ok {
			if found, ok := f.HandlerHook(ctx, t, n.Handler); ok {
				h.notify[i] = &found
			} else {
				h.oldNotify[i] = f.OldHandlerPlaces(ctx, t, n.Handler)
			}
		}
	}
	return h
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

// planDocument is the JSON plan (docs/plan-format.md).
type planDocument struct {
	FormatVersion string             `json:"format_version"`
	Inputs        []planInput        `json:"inputs"`
	OnDangling    string             `json:"on_dangling"`
	Groups        []planGroup        `json:"groups"`
	Notifications []planNotification `json:"notifications"`
	Cycles        [][]string         `json:"cycles"`
	Dropped       []planDropped      `json:"dropped"`
	Warnings      []destroy.Warning  `json:"warnings"`
	Summary       planSummary        `json:"summary"`
}

type planInput struct {
	Role   string `json:"role"` // model, snapshot or graph
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

type planGroup struct {
	Index   int          `json:"index"`
	Objects []planObject `json:"objects"`
}

type planObject struct {
	ID      string           `json:"id"`
	Type    string           `json:"type"`
	Path    string           `json:"path"`
	Owner   *string          `json:"owner"`
	Reasons []destroy.Reason `json:"reasons"`
	Classes []string         `json:"classes"`
	Package *string          `json:"package"`
	Hooks   []planHook       `json:"hooks"`
}

type planHook struct {
	Event string `json:"event"`
	Class string `json:"class"`
	Path  string `json:"path"`
	Error string `json:"error,omitempty"`
}

type planNotification struct {
	Group      int       `json:"group"`
	Publisher  string    `json:"publisher"`
	Subscriber string    `json:"subscriber"`
	Handler    string    `json:"handler"`
	Hook       *planHook `json:"hook"`
	// OldPlaces: files at the place notify hooks had before
	// <C>/notify/<handler>, which do not run; only when Hook is null.
	OldPlaces []string `json:"old_places,omitempty"`
}

type planDropped struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Path string `json:"path"`
}

type planSummary struct {
	SnapshotObjects    int  `json:"snapshot_objects"`
	IncomingObjects    int  `json:"incoming_objects"`
	Destroy            int  `json:"destroy"`
	Groups             int  `json:"groups"`
	Notifications      int  `json:"notifications"`
	DanglingReferences int  `json:"dangling_references"`
	Dropped            int  `json:"dropped"`
	Warnings           int  `json:"warnings"`
	ApplyRefuses       bool `json:"apply_refuses"`
}

func newPlanDocument(in *inputs, p *destroy.Plan, onDangling string, hooks *planHooks) *planDocument {
	d := &planDocument{
		FormatVersion: PlanFormatVersion,
		OnDangling:    onDangling,
		Groups:        []planGroup{},
		Notifications: []planNotification{},
		Cycles:        [][]string{},
		Dropped:       []planDropped{},
		Warnings:      p.Warnings,
	}
	if d.Warnings == nil {
		d.Warnings = []destroy.Warning{}
	}
	if in.Model != nil {
		d.Inputs = []planInput{{"model", in.Model.Name, in.Model.SHA256()}}
	} else {
		d.Inputs = []planInput{{"snapshot", in.SnapshotFile.Name, in.SnapshotFile.SHA256()}, {"graph", in.GraphFile.Name, in.GraphFile.SHA256()}}
	}
	for _, g := range p.Groups {
		pg := planGroup{Index: g.Index, Objects: make([]planObject, 0, len(g.Objects))}
		for _, i := range g.Objects {
			o := &p.Objects[i]
			po := planObject{ID: o.ID, Type: o.Type, Path: o.Path, Reasons: o.Reasons, Classes: hooks.classes[i], Hooks: []planHook{}}
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
				po.Hooks = append(po.Hooks, toPlanHook(f))
			}
			pg.Objects = append(pg.Objects, po)
		}
		d.Groups = append(d.Groups, pg)
	}
	for i, n := range p.Notifications {
		pn := planNotification{Group: n.Group, Publisher: p.Objects[n.Publisher].ID, Subscriber: n.Subscriber, Handler: n.Handler,
			OldPlaces: hooks.oldNotify[i]}
		if f := hooks.notify[i]; f != nil {
			h := toPlanHook(*f)
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
		d.Dropped = append(d.Dropped, planDropped{ID: o.ID, Type: o.TypeString, Path: inc.ObjectPath(i)})
	}
	d.Summary = planSummary{
		SnapshotObjects:    p.Diff.Snapshot.Len(),
		IncomingObjects:    inc.Len(),
		Destroy:            len(p.Objects),
		Groups:             len(p.Groups),
		Notifications:      len(p.Notifications),
		DanglingReferences: len(p.Diff.Dangling),
		Dropped:            len(p.Diff.Dropped),
		Warnings:           len(p.Warnings),
		ApplyRefuses:       onDangling == "error" && len(p.Diff.Dangling) > 0,
	}
	return d
}

func toPlanHook(f hook.Found) planHook {
	h := planHook{Event: f.Event, Class: f.Class, Path: f.Path}
	if f.Err != nil {
		h.Error = f.Err.Error()
	}
	return h
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writePlanFile saves the JSON plan atomically: a temporary file in the same
// folder, fsync, rename, fsync of the folder.
func writePlanFile(path string, doc *planDocument) error {
	return writeFileAtomic(path, 0o644, func(w io.Writer) error { return writeJSON(w, doc) })
}

// writeFileAtomic writes path through a temporary file in its folder so
// that readers see the old or the new content, never a mix. An existing
// file keeps its mode.
func writeFileAtomic(path string, mode os.FileMode, write func(io.Writer) error) error {
	return writeFileCommitted(path, mode, write, nil)
}

// writeFileCommitted is writeFileAtomic that calls beforeRename, when not
// nil, with the sha256 (lower-case hex) of the new content once it is
// fsynced and before it is renamed into place; an error from it leaves
// path as it was.
func writeFileCommitted(path string, mode os.FileMode, write func(io.Writer) error, beforeRename func(sum string) error) (err error) {
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	var out io.Writer = f
	var sum hash.Hash
	if beforeRename != nil {
		sum = sha256.New()
		out = io.MultiWriter(f, sum)
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	if err = write(bw); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if beforeRename != nil {
		if err = beforeRename(hex.EncodeToString(sum.Sum(nil))); err != nil {
			return err
		}
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
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
	for _, d := range in.docs() {
		names = append(names, d.Name)
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
			fmt.Fprintf(bw, "  %s %s  %s\n", orDash(o.Type), pal.id(o.ID), pal.dim(o.Path))
			reasons := make([]string, len(o.Reasons))
			for k, r := range o.Reasons {
				reasons[k] = r.Text()
			}
			fmt.Fprintf(bw, "      %s\n", strings.Join(reasons, "; "))
			if cs := hooks.classes[i]; len(cs) > 1 {
				fmt.Fprintf(bw, "      classes: %s (package %s)\n", strings.Join(cs, " < "), hooks.pkg[i])
			}
			switch hs := hooks.destroy[i]; {
			case len(hs) > 0:
				for _, h := range hs {
					fmt.Fprintf(bw, "      hook destroy: %s%s\n", h.Path, hookProblem(h))
				}
			default:
				fmt.Fprintf(bw, "      %s\n", pal.dim("no destroy hook"))
			}
		}
	}
	if len(p.Notifications) > 0 {
		fmt.Fprintf(bw, "\n%s\n", pal.heading("Notifications, before any destroy:"))
		for i, n := range p.Notifications {
			fmt.Fprintf(bw, "  %d. %s handler %s: %s will be destroyed (group %d)\n", i+1, pal.id(n.Subscriber), n.Handler,
				pal.id(p.Objects[n.Publisher].ID), n.Group)
			if h := hooks.notify[i]; h != nil {
				fmt.Fprintf(bw, "      hook notify %s: %s%s\n", n.Handler, h.Path, hookProblem(*h))
			} else {
				fmt.Fprintf(bw, "      %s\n", pal.dim("no "+n.Handler+" hook"))
			}
			for _, old := range hooks.oldNotify[i] {
				fmt.Fprintf(bw, "      %s %s does not run: notify hooks are <class>/notify/<handler>; move it to %s\n",
					pal.warn("warning:"), old, filepath.Join(filepath.Dir(old), hook.NotifyDir, n.Handler))
			}
		}
	}
	if len(p.Diff.Dropped) > 0 {
		inc := p.Diff.Incoming
		fmt.Fprintf(bw, "\n%s\n", pal.heading("Dropped without hooks (destroyed before, no longer referenced):"))
		for _, i := range p.Diff.Dropped {
			o := &inc.Objects[i]
			fmt.Fprintf(bw, "  %s %s  %s\n", orDash(o.TypeString), pal.id(o.ID), pal.dim(inc.ObjectPath(i)))
		}
	}
	if len(p.Warnings) > 0 {
		fmt.Fprintf(bw, "\n%s\n", pal.heading("Warnings:"))
		for _, wn := range p.Warnings {
			fmt.Fprintf(bw, "  %s %s\n", pal.warn(wn.Code+":"), wn.Message)
		}
	}
	fmt.Fprintf(bw, "\n%d to destroy in %d %s, %d %s, %d %s, %d dropped.\n",
		len(p.Objects), len(p.Groups), plural(len(p.Groups), "group", "groups"),
		len(p.Notifications), plural(len(p.Notifications), "notification", "notifications"),
		len(p.Warnings), plural(len(p.Warnings), "warning", "warnings"), len(p.Diff.Dropped))
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
		return " (" + f.Err.Error() + ")"
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
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	fmt.Fprintln(bw, "digraph objgc_plan {")
	fmt.Fprintln(bw, "  rankdir=LR;")
	fmt.Fprintln(bw, "  node [shape=box, fontname=\"Helvetica\"];")
	for _, g := range p.Groups {
		fmt.Fprintf(bw, "  subgraph cluster_group_%d {\n    label=%s;\n", g.Index, q(fmt.Sprintf("group %d", g.Index)))
		for _, i := range g.Objects {
			o := &p.Objects[i]
			fmt.Fprintf(bw, "    %s [label=%s];\n", q(o.ID), q(orDash(o.Class)+"\n"+o.ID))
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
