package cmd

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/destroy/order"
)

type showOptions struct {
	PlanFile string
	Format   string
	NoColor  bool
	// MarkdownMaxChars bounds the Markdown summary (--markdown-max-chars).
	MarkdownMaxChars int
}

func (o *showOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Format, "format", planFormats[0].name, planFormatHelp("as objgc plan prints them"))
	f.IntVar(&o.MarkdownMaxChars, "markdown-max-chars", MarkdownMaxChars, "bound the markdown format to `N` characters, 0 for no bound: long tables are cut, saying so (counts are always shown)")
}

func newShowCmd(streams *IO, global *globalOptions) *cobra.Command {
	o := &showOptions{}
	c := &cobra.Command{
		Use:   "show PLANFILE",
		Short: "Print a plan saved with objgc plan --out, without applying it",
		Long: `show prints a plan saved with objgc plan --out in any of plan's formats, as
plan printed it when it was made: the groups, notifications, hooks, warnings
and summary come from the saved plan alone. It reads neither the model nor
the hooks, runs nothing and needs none of them to still exist; when an input
the plan names changed or is gone, a note on stderr says so (objgc apply
would refuse the plan, exit 5). PLANFILE "-" reads standard input.

The inputs are named by the absolute paths the plan recorded: a plan made
from a relative path shows the same lines with the path made absolute.`,
		Example: `  objgc plan env.json --out plan.json && objgc show plan.json
  objgc show plan.json --format markdown >> "$GITHUB_STEP_SUMMARY"
  objgc show plan.json --format dot | dot -Tsvg > plan.svg`,
		Args: exactArgs(1),
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return []string{"json"}, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: func(c *cobra.Command, args []string) error {
			if _, err := newConfig(c); err != nil {
				return err
			}
			opts := *o
			opts.NoColor = global.NoColor
			opts.PlanFile = args[0]
			return runShow(streams, opts)
		},
	}
	o.addFlags(c.Flags())
	return c
}

// exactArgs is cobra.ExactArgs with the error marked as a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("%s takes %d %s, got %d: %q", c.CommandPath(), n, plural(n, "argument", "arguments"), len(args), args)
		}
		return nil
	}
}

func runShow(streams *IO, opts showOptions) error {
	format, err := findPlanFormat(opts.Format)
	if err != nil {
		return err
	}
	if err := checkMarkdownMaxChars(opts.MarkdownMaxChars); err != nil {
		return err
	}
	sp, err := loadShownPlan(streams, opts.PlanFile)
	if err != nil {
		return err
	}
	if opts.PlanFile != "-" {
		if changed := destroy.InputChanges(sp); len(changed) > 0 {
			fmt.Fprintf(streams.Err, "objgc: note: the inputs of plan %s changed since it was made (objgc apply would refuse it, exit 5): %s\n",
				term(opts.PlanFile), term(strings.Join(changed, "; ")))
		}
	}
	return format.show(streams.Out, sp, &opts, newPalette(streams, opts.NoColor))
}

// loadShownPlan reads the plan saved in path ("-": standard input) and
// refuses a file that is not one, saying what to do with a model.
func loadShownPlan(streams *IO, path string) (*destroy.PlanFile, error) {
	var data []byte
	var err error
	name := path
	if path == "-" {
		name = stdinName
		data, err = io.ReadAll(streams.In)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading plan: %w", err)
	}
	sp, err := destroy.ParsePlanFile(name, data)
	if err != nil {
		return nil, err
	}
	if sp == nil {
		return nil, fmt.Errorf("%s: not a plan saved by objgc plan --out (no \"format_version\" and \"inputs\" at its root); to plan a model, run objgc plan %s", term(name), term(path))
	}
	return sp, nil
}

// savedPlanNames are the names of a saved plan's inputs as its text and
// Markdown forms show them: the absolute paths it recorded.
func savedPlanNames(sp *destroy.PlanFile) []string {
	names := make([]string, 0, len(sp.Inputs))
	for _, in := range sp.Inputs {
		names = append(names, in.Path)
	}
	return names
}

// writeSavedPlanText writes the saved plan sp as writePlanText wrote the
// plan it was made from (the same lines, the inputs by absolute path).
func writeSavedPlanText(w io.Writer, pal *palette, sp *destroy.PlanFile) error {
	bw := bufio.NewWriter(w)
	names := savedPlanNames(sp)
	for i, n := range names {
		names[i] = term(n)
	}
	s := sp.Summary
	fmt.Fprintf(bw, "%s %s\n", pal.heading("Plan for"), strings.Join(names, " -> "))
	if s.Destroy == 0 {
		fmt.Fprintln(bw, "Nothing to destroy.")
	} else {
		fmt.Fprintf(bw, "Destroy %d %s in %d %s, deepest first:\n", s.Destroy, plural(s.Destroy, "object", "objects"),
			s.Groups, plural(s.Groups, "group", "groups"))
	}
	var b bytes.Buffer
	for _, g := range sp.Groups {
		fmt.Fprintf(bw, "\n%s\n", pal.heading(fmt.Sprintf("group %d", g.Index)))
		for _, o := range g.Objects {
			b.Reset()
			pkg := ""
			if o.Package != nil {
				pkg = *o.Package
			}
			writeObjectHead(&b, pal, o.Type, o.ID, o.Path, o.Reasons, o.Classes, pkg)
			writeDestroyHooks(&b, pal, len(o.Hooks), func(k int) (string, string) { return o.Hooks[k].Path, o.Hooks[k].Error })
			bw.Write(b.Bytes())
		}
	}
	if len(sp.Notifications) > 0 {
		fmt.Fprintf(bw, "\n%s\n", pal.heading("Notifications, before any destroy:"))
		for i, n := range sp.Notifications {
			var path, problem string
			if n.Hook != nil {
				path, problem = n.Hook.Path, n.Hook.Error
			}
			writeNotificationLines(bw, pal, i, n.Subscriber, n.Handler, n.Publisher, n.Group, n.Hook != nil, path, problem, n.OldPlaces)
		}
	}
	if len(sp.Dropped) > 0 {
		fmt.Fprintf(bw, "\n%s\n", pal.heading("Dropped without hooks (destroyed before, no longer referenced):"))
		for _, d := range sp.Dropped {
			fmt.Fprintf(bw, "  %s %s  %s\n", term(orDash(d.Type)), pal.id(term(d.ID)), pal.dim(term(d.Path)))
		}
	}
	if len(sp.Warnings) > 0 {
		fmt.Fprintf(bw, "\n%s\n", pal.heading("Warnings:"))
		for _, wn := range sp.Warnings {
			fmt.Fprintf(bw, "  %s %s\n", pal.warn(string(wn.Code)+":"), term(wn.Message))
		}
	}
	writeTextSummary(bw, pal, s, sp.OnDangling)
	return bw.Flush()
}

// writeObjectHead writes the first lines of a doomed object as the text
// plan lists it: type, id and path, reasons, class hierarchy (when it is
// more than the class). Its destroy hooks follow (writeDestroyHooks).
func writeObjectHead(b *bytes.Buffer, pal *palette, typ, id, path string, reasons []order.Reason, classes []string, pkg string) {
	for _, s := range []string{"  ", term(orDash(typ)), " ", pal.id(term(id)), "  ", pal.dim(term(path)), "\n      "} {
		b.WriteString(s)
	}
	for k, r := range reasons {
		if k > 0 {
			b.WriteString("; ")
		}
		b.WriteString(term(r.Text()))
	}
	b.WriteByte('\n')
	if len(classes) > 1 {
		fmt.Fprintf(b, "      classes: %s (package %s)\n", term(strings.Join(classes, " < ")), term(pkg))
	}
}

// writeDestroyHooks writes an object's n destroy hooks, hook(k) giving
// the path of the k-th and why it cannot run ("" when it can), or that
// it has none.
func writeDestroyHooks(b *bytes.Buffer, pal *palette, n int, hook func(k int) (path, problem string)) {
	if n == 0 {
		fmt.Fprintf(b, "      %s\n", pal.dim("no destroy hook"))
	}
	for k := range n {
		path, problem := hook(k)
		fmt.Fprintf(b, "      hook destroy: %s%s\n", term(path), problemText(problem))
	}
}

// writeNotificationLines writes notification i (from 0) as the text plan
// lists it: who is told what, its hook (found, with why it cannot run) or
// none, and the old places of notify hooks that do not run.
func writeNotificationLines(w io.Writer, pal *palette, i int, subscriber, handler, publisher string, group int, found bool, path, problem string, oldPlaces []string) {
	fmt.Fprintf(w, "  %d. %s handler %s: %s will be destroyed (group %d)\n", i+1, pal.id(term(subscriber)), term(handler),
		pal.id(term(publisher)), group)
	if found {
		fmt.Fprintf(w, "      hook notify %s: %s%s\n", term(handler), term(path), problemText(problem))
	} else {
		fmt.Fprintf(w, "      %s\n", pal.dim("no "+term(handler)+" hook"))
	}
	for _, old := range oldPlaces {
		fmt.Fprintf(w, "      %s %s does not run: notify hooks are <class>/notify/<handler>; move it to %s\n",
			pal.warn("warning:"), term(old), term(filepath.Join(filepath.Dir(old), hook.NotifyDir, handler)))
	}
}

// writeTextSummary writes the text plan's closing lines: the counts, and
// every reason apply would refuse (s.Refusals), one a line.
func writeTextSummary(w io.Writer, pal *palette, s destroy.PlanSummary, onDangling string) {
	fmt.Fprintf(w, "\n%d to destroy in %d %s, %d %s, %d %s, %d dropped",
		s.Destroy, s.Groups, plural(s.Groups, "group", "groups"),
		s.Notifications, plural(s.Notifications, "notification", "notifications"),
		s.Warnings, plural(s.Warnings, "warning", "warnings"), s.Dropped)
	if n := s.WithoutDestroyHook; n > 0 {
		fmt.Fprintf(w, ", %d without a destroy hook", n)
	}
	fmt.Fprintln(w, ".")
	for _, r := range s.Refusals {
		fmt.Fprintf(w, "%s %s; apply refuses to run.\n", pal.bad("Apply would refuse:"), term(r.Message))
	}
	if n := s.DanglingReferences; n > 0 && onDangling == "keep" {
		fmt.Fprintf(w, "%d dangling %s: the referenced objects are destroyed and kept in the output flagged destroyed.\n", n, plural(n, "reference", "references"))
	}
}

// problemText is " (why)" for a hook that cannot run, "" for one that can.
func problemText(why string) string {
	if why == "" {
		return ""
	}
	return " (" + term(why) + ")"
}

// writeSavedPlanDot writes the saved plan sp as writeDot wrote the plan it
// was made from.
func writeSavedPlanDot(w io.Writer, sp *destroy.PlanFile) error {
	bw := bufio.NewWriter(w)
	writeDotHead(bw)
	for _, g := range sp.Groups {
		writeDotGroup(bw, g.Index, len(g.Objects), func(k int) (class, id string) {
			return g.Objects[k].TypeRef.Name, g.Objects[k].ID
		})
	}
	for _, g := range sp.Groups {
		for _, o := range g.Objects {
			writeDotEdges(bw, o.ID, o.Reasons)
		}
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}
