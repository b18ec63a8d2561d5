package cmd

import (
	"bytes"
	"context"
	"errors"
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
	"github.com/objgc/objgc/destroy/planfile"
	"github.com/objgc/objgc/internal/inputfile"
)

type showOptions struct {
	PlanFile string
	Format   string
	NoColor  bool
	// MarkdownMaxChars bounds the Markdown summary (--markdown-max-chars).
	MarkdownMaxChars int
	// Check: also say what apply of the plan would do now (--check).
	Check bool
}

func (o *showOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Format, "format", planFormats[0].name, planFormatHelp("as objgc plan prints them"))
	f.IntVar(&o.MarkdownMaxChars, "markdown-max-chars", MarkdownMaxChars, "bound the markdown format to `N` characters, 0 for no bound: long tables are cut, saying so (counts are always shown)")
	f.BoolVar(&o.Check, "check", false, "also check the plan as objgc apply would now (inputs, hooks, packages, refusals; nothing written): exit 0 when apply would run or the plan was applied already, 1 when apply would refuse it, 5 when it is stale")
}

func newShowCmd(streams *IO, global *globalOptions) *cobra.Command {
	o := &showOptions{}
	c := &cobra.Command{
		Use:   "show PLANFILE",
		Short: "Print a plan saved with objgc plan --out, without applying it",
		Long: `show prints a plan saved with objgc plan --out in any of plan's formats, as
plan printed it when it was made: the groups, notifications, hooks, warnings
and summary come from the saved plan alone. It reads nothing but the plan
file (neither the model nor the hooks), runs nothing and needs none of them
to still exist; the first SIGINT or SIGTERM ends it (exit 130). PLANFILE "-"
reads standard input.

The inputs are named by absolute path: what the plan records under its own
directory is made absolute against the directory the plan file is in now.

--check also says, on stderr, what objgc apply of the plan would do now,
found by apply's own check before its lock (nothing is locked, written or
run): run (how many objects it would destroy), refuse (why; exit 1), the
plan is stale (what changed; exit 5), or it was applied already (exit 0).
It reads the inputs and looks up the hooks, so it takes as long as reading
the inputs; the first SIGINT or SIGTERM ends it.`,
		Example: `  objgc plan env.json --out plan.json && objgc show plan.json
  objgc show plan.json --format markdown >> "$GITHUB_STEP_SUMMARY"
  objgc show plan.json --format dot | dot -Tsvg > plan.svg
  objgc show plan.json --check`,
		Args: exactArgs(1),
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return []string{"json"}, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts := *o
			opts.NoColor = global.NoColor
			opts.PlanFile = args[0]
			return runShow(c.Context(), streams, opts)
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

func runShow(ctx context.Context, streams *IO, opts showOptions) error {
	ctx, cancel := streams.interrupted(ctx)
	defer cancel()
	format, err := findPlanFormat(opts.Format)
	if err != nil {
		return err
	}
	if err := checkMarkdownMaxChars(opts.MarkdownMaxChars); err != nil {
		return err
	}
	if opts.Check && opts.PlanFile == "-" {
		return usageErrorf("--check: a plan read from standard input has no directory its paths are relative to; give PLANFILE")
	}
	// Reading and rendering look at no context: a signal ends show at
	// once (untilDone), which holds no lock and writes no file.
	var sp *planfile.File
	if err := untilDone(ctx, func() (err error) {
		if sp, err = loadShownPlan(streams, opts.PlanFile); err != nil {
			return err
		}
		return format.show(streams.Out, sp, &opts, newPalette(streams, opts.NoColor))
	}); err != nil {
		return err
	}
	if !opts.Check {
		return nil
	}
	return checkShownPlan(ctx, streams, opts.PlanFile, sp)
}

// checkShownPlan says on stderr what apply of the saved plan sp (read
// from planFile) would do now, by apply's own check (destroy.Check), and
// returns the exit status apply would have for a refusal (1) or a stale
// plan (5). It ends at the first interrupt.
func checkShownPlan(ctx context.Context, streams *IO, planFile string, sp *planfile.File) error {
	model, snap, graph, err := planInputs(planFile, sp)
	if err != nil {
		return err
	}
	var v *destroy.Verdict
	if err := untilDone(ctx, func() error {
		finder := &destroy.HookFinder{}
		if !sp.NoHooks {
			f, err := newFinder(streams, sp.HooksDirs, sp.CacheDir, "")
			if err != nil {
				return err
			}
			finder = f
		}
		if finder.Packages != nil {
			defer finder.Packages.Close()
		}
		verdict, err := destroy.Check(ctx, destroy.RunOptions{
			ApplyOptions: destroy.ApplyOptions{Finder: finder, Env: streams.environ()},
			Model:        model, Snapshot: snap, Graph: graph,
			Plan: sp, PlanPath: planFile,
			OnDanglingKeep: sp.OnDangling == "keep", NoHooks: sp.NoHooks, RequireHooks: sp.RequireHooks,
		})
		v = verdict
		return err
	}); err != nil {
		if errors.Is(err, errPlanInterrupted) {
			return err
		}
		return fmt.Errorf("check: %w", applyError(err))
	}
	switch {
	case v.Applied:
		fmt.Fprintf(streams.Err, "objgc: check: plan %s was applied already: objgc apply of it would do nothing and exit 0\n", term(planFile))
	case len(v.Refusals) > 0:
		reasons := make([]string, len(v.Refusals))
		for i, r := range v.Refusals {
			reasons[i] = term(r.Message)
		}
		return &exitError{code: ExitError, err: fmt.Errorf("check: objgc apply of plan %s would refuse it: %s", term(planFile), strings.Join(reasons, "; "))}
	default:
		fmt.Fprintf(streams.Err, "objgc: check: objgc apply of plan %s would run: %d to destroy, %d dropped\n", term(planFile), v.Destroy, v.Dropped)
	}
	return nil
}

// loadShownPlan reads the plan saved in path ("-": standard input) and
// refuses a file that is not one, saying what to do with a model. A
// named pipe, a socket or a device is refused without reading it.
func loadShownPlan(streams *IO, path string) (*planfile.File, error) {
	var data []byte
	var err error
	name := path
	if path == "-" {
		name = stdinName
		data, err = io.ReadAll(streams.In)
	} else {
		var f *os.File
		if f, _, err = inputfile.Open(path); err == nil {
			data, err = io.ReadAll(f)
			f.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reading plan: %w", err)
	}
	sp, err := planfile.Parse(name, data)
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
func savedPlanNames(sp *planfile.File) []string {
	names := make([]string, 0, len(sp.Inputs))
	for _, in := range sp.Inputs {
		names = append(names, in.Path)
	}
	return names
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
// the k-th (its path, the user it runs as when not the invoking one, and
// why it cannot run), or that it has none.
func writeDestroyHooks(b *bytes.Buffer, pal *palette, n int, hook func(k int) *planfile.Hook) {
	if n == 0 {
		fmt.Fprintf(b, "      %s\n", pal.dim("no destroy hook"))
	}
	for k := range n {
		h := hook(k)
		fmt.Fprintf(b, "      hook destroy: %s%s%s\n", term(h.Path), runAsText(h.RunAs), problemText(h.Error))
	}
}

// writeNotificationLines writes notification i (from 0) as the text plan
// lists it: who is told what, its hook (found, with why it cannot run) or
// none, and the old places of notify hooks that do not run.
func writeNotificationLines(w io.Writer, pal *palette, i int, subscriber, handler, publisher string, group int, h *planfile.Hook, oldPlaces []string) {
	fmt.Fprintf(w, "  %d. %s handler %s: %s will be destroyed (group %d)\n", i+1, pal.id(term(subscriber)), term(handler),
		pal.id(term(publisher)), group)
	if h != nil {
		fmt.Fprintf(w, "      hook notify %s: %s%s%s\n", term(handler), term(h.Path), runAsText(h.RunAs), problemText(h.Error))
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
func writeTextSummary(w io.Writer, pal *palette, s planfile.Summary, onDangling string) {
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
		fmt.Fprintf(w, "%d dangling %s: the referenced objects are destroyed and kept in the output flagged destroyed, which Murano 14's engine cannot load (warning engine_cannot_load).\n",
			n, plural(n, "reference", "references"))
	}
}

// runAsText is " (runs as USER)" for a hook that runs as another user
// than the one running objgc (planfile.Hook.RunAs), "" otherwise.
func runAsText(user string) string {
	if user == "" {
		return ""
	}
	return " (runs as " + term(user) + ")"
}

// problemText is " (why)" for a hook that cannot run, "" for one that can.
func problemText(why string) string {
	if why == "" {
		return ""
	}
	return " (" + term(why) + ")"
}
