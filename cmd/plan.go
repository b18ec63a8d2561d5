package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/destroy/planfile"
	"github.com/objgc/objgc/internal/memtune"
	"github.com/objgc/objgc/pkgcache"
	"github.com/objgc/objgc/snapshot"
)

type planOptions struct {
	runSettings
	Format string
	Out    string // flag only
	// JUnit: also write the plan as JUnit XML to this file, on every
	// exit once the flags are checked (cmd/junit.go).
	JUnit            string    // flag only
	started          time.Time // when the run began, for the JUnit timestamp
	DetailedExitcode bool
	// MarkdownMaxChars bounds the Markdown summary (--markdown-max-chars).
	MarkdownMaxChars int
	NoColor          bool
}

// addFlags declares plan's flags, each bound to its field of o: the
// settings plan shares with apply (runSettings), then its own.
func (o *planOptions) addFlags(f *pflag.FlagSet) {
	o.runSettings.addFlags(f)
	f.StringVar(&o.Format, "format", planFormats[0].name, planFormatHelp("for a merge-request comment or CI job summary"))
	f.IntVar(&o.MarkdownMaxChars, "markdown-max-chars", MarkdownMaxChars, "bound the markdown format to `N` characters, 0 for no bound: long tables are cut, saying so (counts are always shown)")
	f.StringVar(&o.Out, "out", "", "also save the plan as JSON to `FILE` (for objgc apply FILE)")
	f.StringVar(&o.JUnit, "junit", "", "also write the plan as JUnit XML to `FILE`, whatever the exit status: a skipped test case a doomed object, a failing one a reason apply would refuse, an error when plan fails")
	f.BoolVar(&o.DetailedExitcode, "detailed-exitcode", false, "exit 2 when there is something to destroy, 0 when not, 1 when apply would refuse the plan")
}

func newPlanCmd(streams *IO, global *globalOptions, cfg *config) *cobra.Command {
	o := &planOptions{}
	c := &cobra.Command{
		Use:   "plan [MODEL]",
		Short: "Show what would be destroyed, in which order, without running hooks",
		Long: `plan compares the snapshot of the previous deployment with the incoming model
and prints the objects removed offline in the order objgc apply would destroy
them: groups deepest first (owned objects before owners, a publisher before its
subscribers), the notifications that run before any destroy, the hooks found,
and warnings. It runs no hooks.

MODEL is a Murano envelope {"Objects", "ObjectsCopy", "Attributes"} or an
engine task {"model": ...}; or give two files with --snapshot and --graph,
each a bare object tree or an envelope. "-" reads standard input. A key
written twice in one JSON object of an input is an error: Murano reads the
last one, objgc does not guess.

With --detailed-exitcode, plan exits 0 when there is nothing to destroy, 2
when there is, and 1 when apply would refuse the plan (a dangling reference
with --on-dangling=error, no hook source without --no-hooks, a doomed
object without a destroy hook with --require-hooks, a hook that cannot run):
the plan is still printed, and stderr says why apply would refuse. This is
the rule apply itself refuses by; --no-hooks and --require-hooks are
recorded in the plan saved with --out, and apply of it runs with them.

--junit FILE writes the plan as JUnit XML for a CI server's test step, on
every exit once the flags are checked: a skipped test case a doomed object
(planned, not applied yet), a failing one a reason apply would refuse, an
error when plan fails (an input that cannot be read, say), one passing
case when there is nothing to destroy. objgc apply --junit FILE replaces
it with what apply did.`,
		Example: `  objgc plan env.json --hooks-dir ./hooks
  objgc plan --snapshot before.json --graph after.json --format json
  objgc plan model.json --out plan.json --detailed-exitcode
  objgc plan env.json --format markdown >> "$GITHUB_STEP_SUMMARY"`,
		Args: maxArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts := *o
			opts.NoColor = global.NoColor
			opts.started = time.Now()
			if err := opts.resolve(cfg, args); err != nil {
				return err
			}
			return runPlan(c.Context(), streams, opts)
		},
	}
	o.addFlags(c.Flags())
	return c
}

// addInputFlags declares --snapshot and --graph, bound to snapshot and
// graph.
func addInputFlags(f *pflag.FlagSet, snapshot, graph *string) {
	f.StringVar(snapshot, "snapshot", "", "the previous deployment's model `FILE` (bare tree or envelope)")
	f.StringVar(graph, "graph", "", "the incoming model `FILE` (bare tree or envelope)")
}

// inputs is what plan and apply read.
type inputs = destroy.Inputs

// loadInputs checks the input flags and reads MODEL, or --snapshot and
// --graph (destroy.ReadInputs), hashing them while they are read when hash
// is set (the plan written names their sha256).
func loadInputs(streams *IO, model, snapFile, graphFile string, hash bool) (*inputs, error) {
	if err := checkInputFlags(model, snapFile, graphFile); err != nil {
		return nil, err
	}
	return destroy.ReadInputs(streams.In, model, snapFile, graphFile, nil, hash)
}

// checkInputFlags refuses MODEL with --snapshot or --graph, one of
// --snapshot and --graph alone, no input, and two inputs from standard
// input.
func checkInputFlags(model, snapFile, graphFile string) error {
	switch {
	case model != "" && (snapFile != "" || graphFile != ""):
		return usageErrorf("give MODEL or --snapshot and --graph, not both")
	case model == "" && (snapFile == "") != (graphFile == ""):
		return usageErrorf("--snapshot and --graph go together")
	case model == "" && snapFile == "":
		return usageErrorf("no model given: objgc plan MODEL, or --snapshot FILE --graph FILE")
	case snapFile == "-" && graphFile == "-":
		return usageErrorf("only one of --snapshot and --graph can read standard input")
	}
	return nil
}

// openPackages starts a package cache session when the cache directory
// is a package cache (pkgcache.IsCache): plan and apply read class
// hierarchies and package hooks from it and hold the usage locks of what
// they read until the run ends. A missing cache is no error (the
// hierarchy of a class is then the class alone); plan does not create
// one. When the directory was named (from, as settingFrom says: a flag, a
// variable or the config file) and does not exist, a warning on stderr
// says so: a mistyped --cache-dir must not silently lose every class
// hierarchy and package hook. An existing directory that is not a cache
// is taken as a cache not filled yet. A cache in an earlier objgc layout
// is an error (pkgcache.ErrOldLayout, which says how to migrate), and so
// is one that belongs to another user (pkgcache.ErrNotOwner), and one whose
// root users other than its owner may write (pkgcache.ErrUnsafeRoot): going on
// without those packages would plan and run without their class
// hierarchies and hooks; so is one the user may not read
// (cacheAccessError).
func openPackages(streams *IO, dir, from string) (*pkgcache.Session, error) {
	// A cache one may not read is not an empty one: going on would plan
	// and run without its hierarchies and hooks.
	if err := cacheAccessError(dir); err != nil {
		return nil, err
	}
	if !pkgcache.IsCache(dir) {
		if _, err := os.Stat(dir); from != "" && errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(streams.Err, "objgc: warning: cache dir %s (from %s): no such directory, no package cache there; class hierarchies and package hooks are not used\n", term(absPath(dir)), term(from))
		}
		return nil, nil
	}
	c, err := pkgcache.OpenExisting(dir)
	switch {
	case errors.Is(err, pkgcache.ErrOldLayout), errors.Is(err, pkgcache.ErrUnsafeRoot):
		return nil, err
	case err != nil:
		fmt.Fprintf(streams.Err, "objgc: warning: package cache %s not used: %s\n", term(dir), term(err.Error()))
		return nil, nil
	}
	if err := c.CheckOwner(); err != nil {
		return nil, err
	}
	return c.NewSession(), nil
}

func checkOnDangling(mode string) error {
	if mode != "error" && mode != "keep" {
		return usageErrorf("--on-dangling must be error or keep, not %q", mode)
	}
	return nil
}

// errPlanInterrupted is a plan stopped by SIGINT or SIGTERM: it writes
// nothing more and exits 130 (exitCode).
var errPlanInterrupted = destroy.ErrInterrupted

// untilDone runs f and returns its error, or errPlanInterrupted as soon as
// ctx is done. It is for the stages whose loops do not look at a context
// (reading, rendering): f goes on in the background until the process
// exits, which it does at once with 130; plan holds no lock and writes no
// file that f could leave half-written (--out is written outside it).
func untilDone(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return errPlanInterrupted
	}
}

func runPlan(ctx context.Context, streams *IO, opts planOptions) (err error) {
	ctx, cancel := streams.interrupted(ctx)
	defer cancel()
	format, err := checkPlanFlags(opts)
	if err != nil {
		return err
	}
	// From here on every exit leaves the JUnit report asked for.
	pj := newPlanJUnit(&opts)
	defer pj.write(&err)
	// A hooks dir that is not there is an error of the inputs, which
	// the report names (a CI job whose checkout lacks hooks/).
	if err := checkHooksDirs(opts.HooksDirs, opts.hooksDirsFrom); err != nil {
		return err
	}
	// Every stage starts with a look at ctx, and the long ones look
	// inside too: the first SIGINT or SIGTERM ends a plan within
	// milliseconds whatever it is doing.
	var tune *memtune.Run // set once the inputs are read
	stage := func() error {
		if ctx.Err() != nil {
			return errPlanInterrupted
		}
		tune.Stage()
		return nil
	}
	if err := stage(); err != nil { // read
		return err
	}
	// The collector's target and the memory limit of a plan
	// (docs/decisions.md, "A plan's memory"). The index is made while
	// reading: the limit is set before, from the files' sizes, or once
	// read for standard input.
	tune = memtune.Plan(opts.Model, opts.Snapshot, opts.Graph)
	defer tune.Restore()
	var in *inputs
	if err := untilDone(ctx, func() (err error) {
		// Only the JSON and Markdown plans and --out name the inputs'
		// sha256; a text or dot plan does not hash them (a pass over
		// every byte of the inputs). SHA256 still computes it if asked.
		hash := opts.Out != "" || format.hashesInputs
		in, err = loadInputs(streams, opts.Model, opts.Snapshot, opts.Graph, hash)
		return err
	}); err != nil {
		return err
	}
	defer in.Close()
	// From here on the plan reads the inputs' bytes (types, paths, the
	// hash): a mapped one truncated meanwhile is an error naming it, on
	// this goroutine and on those rendering the plan.
	defer snapshot.Protect(&err, in.Docs)()
	// The model, its index and the plan stay live to the end: near the
	// bound on memory, the collector collects more often.
	tune.Read(memInputs(in.Docs()))
	// The package cache is opened once the plan is made, before its
	// hooks are looked up: an input refused never touches it.
	finder := &destroy.HookFinder{Dirs: opts.HooksDirs}
	if opts.NoHooks {
		finder.Dirs = nil // --no-hooks: nothing is looked up, as apply looks up nothing
	}
	prep, err := destroy.Prepare(ctx, in.Snapshot, in.Incoming, destroy.PrepareOptions{
		Finder: finder,
		Env:    streams.environ(),
		Stage: func(name string) error {
			if err := stage(); err != nil || name != "hooks" || opts.NoHooks {
				return err
			}
			session, err := openPackages(streams, opts.CacheDir, opts.cacheDirFrom)
			if session != nil {
				finder.Packages = session
			}
			return err
		},
	})
	if finder.Packages != nil {
		defer finder.Packages.Close()
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return errPlanInterrupted
	case err != nil:
		return err
	}
	p := prep.Plan
	hooks := newPlanHooks(prep, finder, opts.CacheDir, destroy.RefusalSettings{
		OnDanglingKeep: opts.OnDangling == "keep", NoHooks: opts.NoHooks, RequireHooks: opts.RequireHooks})
	pj.planned(p, hooks.refusals)
	p.Warnings = append(p.Warnings, prep.HookWarnings...)
	p.Warnings = append(p.Warnings, prep.PackageWarnings...)
	if opts.OnDangling == "keep" {
		p.Warnings = append(p.Warnings, destroy.KeepWarnings(p)...)
	}
	if err := stage(); err != nil { // render
		return err
	}
	tune.Render()
	doc := newPlanJSON(in, p, opts.OnDangling, hooks)
	if err := in.CheckMapped(); err != nil {
		return err
	}
	if opts.Out != "" {
		if err := writePlanFile(opts.Out, doc); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return errPlanInterrupted
		}
	}
	if err := untilDone(ctx, func() (err error) {
		defer snapshot.Protect(&err, in.Docs)()
		return format.plan(streams.Out, &planRender{in: in, doc: doc, opts: &opts, pal: newPalette(streams, opts.NoColor), hooks: hooks})
	}); err != nil {
		return err
	}
	if err := in.CheckMapped(); err != nil {
		return err // what was written may mix the file's old and new bytes
	}
	pj.done()
	if !opts.DetailedExitcode {
		return nil
	}
	return detailedExit(p, hooks.refusals)
}

// checkPlanFlags refuses plan's flags that cannot work together, before
// any input is read, and returns the output format asked for.
func checkPlanFlags(opts planOptions) (*planFormat, error) {
	format, err := findPlanFormat(opts.Format)
	if err != nil {
		return nil, err
	}
	if err := checkOnDangling(opts.OnDangling); err != nil {
		return nil, err
	}
	if err := checkMarkdownMaxChars(opts.MarkdownMaxChars); err != nil {
		return nil, err
	}
	if opts.Out != "" && (opts.Model == "-" || opts.Snapshot == "-" || opts.Graph == "-") {
		return nil, usageErrorf("--out: a plan of standard input cannot be applied; save the model to a file and plan that")
	}
	if err := checkPlanOut(opts); err != nil {
		return nil, err
	}
	if err := checkPlanJUnit(opts); err != nil {
		return nil, err
	}
	if err := checkNoHooksDirs(opts.NoHooks, opts.RequireHooks, opts.HooksDirs, opts.hooksDirsFrom); err != nil {
		return nil, err
	}
	return format, nil
}

// detailedExit is the error that gives plan --detailed-exitcode's status:
// 1 when apply would refuse plan p (refusals, destroy.Prepared.Refusals),
// 2 when it has work to do, nil (0) otherwise. A plan that apply would
// refuse is no work to do: a pipeline that applies on 2 would only meet
// apply's refusal (exit 1) there, so plan says it here, with the same
// code and the reasons.
func detailedExit(p *order.Plan, refusals []planfile.Refusal) error {
	if len(refusals) > 0 {
		reasons := make([]string, len(refusals))
		for i, r := range refusals {
			reasons[i] = term(r.Message)
		}
		return &exitError{code: ExitError, err: fmt.Errorf("apply would refuse this plan: %s", strings.Join(reasons, "; "))}
	}
	if len(p.Objects) > 0 {
		return &exitError{code: ExitWorkFound}
	}
	return nil
}

// memInputs are a plan's inputs as its memory limit counts them.
func memInputs(docs []*snapshot.Document) []memtune.Input {
	var in []memtune.Input
	for _, d := range docs {
		if d != nil {
			in = append(in, memtune.Input{Size: int64(len(d.Data)), Mapped: d.Mapped()})
		}
	}
	return in
}

// checkPlanOut refuses, before any input is read, a --out that
// writeFileAtomic could not replace or that is one of the inputs (see
// checkOutput); "-" is refused, as the plan on standard output is
// --format json.
func checkPlanOut(opts planOptions) error {
	switch opts.Out {
	case "":
		return nil
	case "-":
		return usageErrorf("--out needs a file; for the JSON plan on standard output use --format json")
	}
	files := []namedFile{{"the model input", opts.Model, false}, {"the --snapshot input", opts.Snapshot, false}, {"the --graph input", opts.Graph, false}}
	_, err := checkOutput("--out", opts.Out, files, "the plan would overwrite it")
	return err
}

// checkPlanJUnit refuses, before any input is read, a --junit that
// writeFileAtomic could not replace, that is one of the inputs or the
// --out plan (see checkOutput); "-" is refused, as apply refuses it.
func checkPlanJUnit(opts planOptions) error {
	switch opts.JUnit {
	case "":
		return nil
	case "-":
		return usageErrorf("--junit needs a file; the plan on standard output is --format json")
	}
	files := []namedFile{{"the model input", opts.Model, false}, {"the --snapshot input", opts.Snapshot, false},
		{"the --graph input", opts.Graph, false}, {"the --out plan", opts.Out, false}}
	_, err := checkOutput("--junit", opts.JUnit, files, "the JUnit report would overwrite it")
	return err
}
