package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/destroy/journal"
	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/destroy/planfile"
	"github.com/objgc/objgc/internal/inputfile"
	"github.com/objgc/objgc/internal/memtune"
	"github.com/objgc/objgc/snapshot"
)

type applyOptions struct {
	runSettings
	Write       string // flag only
	Parallelism int
	HookTimeout time.Duration
	HookGrace   time.Duration
	FailFast    bool
	Force       bool // flag only
	LockTimeout time.Duration
	Format      string
	NoColor     bool
	// AutoApprove: do not ask before destroying, even at a terminal.
	AutoApprove bool
	// JUnit: also write the report as JUnit XML to this file (cmd/junit.go).
	JUnit   string    // flag only
	started time.Time // when the run began, for the JUnit timestamp
	// Quiet: errors and warnings only; Verbose: every hook run too
	// (cmd/quiet.go).
	Quiet   bool
	Verbose bool
	// StatusInterval is how often a status line is printed while hooks
	// run where stderr is no terminal; 0: never (cmd/status.go).
	StatusInterval time.Duration
}

// addFlags declares apply's flags, each bound to its field of o: the
// settings apply shares with plan (runSettings), then its own.
func (o *applyOptions) addFlags(f *pflag.FlagSet) {
	o.runSettings.addFlags(f)
	f.StringVar(&o.Write, "write", "", "write the model to `FILE`, - for standard output (default: rewrite MODEL in place)")
	f.IntVar(&o.Parallelism, "parallelism", 1, "destroy up to `N` objects of one group at a time")
	durationVar(f, &o.HookTimeout, "hook-timeout", 10*time.Minute, hookTimeoutRule, "duration", "kill a hook's process group after `DURATION`")
	durationVar(f, &o.HookGrace, "hook-grace", 10*time.Second, hookGraceRule, "duration", "after a hook times out or a second interrupt, wait `DURATION` between SIGTERM and SIGKILL of its process group")
	f.BoolVar(&o.FailFast, "fail-fast", false, "start nothing new after the first failed destroy")
	f.BoolVar(&o.Force, "force", false, "mark objects whose destroy hooks failed destroyed anyway")
	durationVar(f, &o.LockTimeout, "lock-timeout", 0, lockTimeoutRule, "duration", "wait up to `DURATION` for the lock on the target (0: fail at once)")
	f.StringVar(&o.Format, "format", "text", "report format: text or json")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "print only errors, failures, warnings and the summary: no progress, no hook output as it comes, long lists as one line a type with a count, nothing when all went well")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "also report every hook run, with its exit status and duration, and every notification")
	durationVar(f, &o.StatusInterval, "status-interval", 30*time.Second, statusIntervalRule, "duration", "where stderr is no terminal (a CI log), print a status line every `DURATION` while hooks run (0: never, else at least 1s; not with --quiet)")
	f.StringVar(&o.JUnit, "junit", "", "also write the report as JUnit XML to `FILE` (one test case a doomed object)")
	f.BoolVar(&o.AutoApprove, "auto-approve", false, "do not ask before destroying: apply MODEL at a terminal shows the plan's summary and asks (a saved plan, reviewed already, and a run without a terminal never ask)")
}

// The rules of apply's durations (durationRule). A hook's timeout and
// grace have no "none": 0 would run a hook without a limit, which is
// what --hook-timeout is there to prevent. A status line more often than
// once a second floods a CI log (a typo of 1ms for 1m would write
// thousands a second).
var (
	hookTimeoutRule    = durationRule{floor: 100 * time.Millisecond, example: "10m"}
	hookGraceRule      = durationRule{floor: 100 * time.Millisecond, example: "10s"}
	lockTimeoutRule    = durationRule{zero: "fail at once", floor: time.Millisecond, example: "2m"}
	statusIntervalRule = durationRule{zero: "never", floor: time.Second, example: "30s"}
)

func newApplyCmd(streams *IO, global *globalOptions, cfg *config) *cobra.Command {
	o := &applyOptions{}
	c := &cobra.Command{
		Use:   "apply [MODEL | PLANFILE]",
		Short: "Destroy the objects removed from the model by running their hooks, then write the model back",
		Long: `apply carries out the plan: it notifies subscribers, destroys the doomed objects
group by group (deepest first) by running their hook scripts, and writes the
model back: Objects with destroyed-but-referenced objects flagged, ObjectsCopy
keeping failed and blocked objects for the next run, Attributes of destroyed
objects dropped. It holds an exclusive lock on <target>.lock and journals every
step in <target>.journal, so that a run that was killed resumes where it
stopped.

At a terminal (standard input and stderr), apply MODEL first shows what
it will destroy (the counts, the first objects, a warning when the whole
environment goes) and destroys only after you answer yes; --auto-approve
does not ask. A saved plan, reviewed already, and a run without a terminal
(CI) never ask.

While hooks run, a terminal shows a progress line on stderr; where stderr
is no terminal (a CI log), a status line is printed every --status-interval
naming the running objects. Neither with --quiet.

Inputs are regular files, or standard input given as -: a named pipe, a
socket or a device is refused before the lock is taken. The first SIGINT or
SIGTERM ends a read of standard input (exit 130, nothing done).

MODEL is rewritten in place unless --write says otherwise; with --snapshot and
--graph, --write is required. --write - writes the model to standard output
(the report then goes to stderr). The output is checked before the lock is
taken: a directory, a file that is not a regular one, a missing or
unwritable folder, the --snapshot input or the saved plan, or the lock or
journal file of an input is refused; --junit may be no input (a saved
plan's model included) and not the --write output either. Once these
checks passed, --junit FILE is written on every exit: when apply stops
before it runs anything (a refusal, a stale plan, a lock held, an error),
a test case that does not pass says why, after the plan's objects, each
skipped; the report is then the only file apply writes. Files are
compared by name and by identity (device and inode): a link, a hard link
or ./ in front does not get past. A target with more than one hard link
is refused: the lock goes by name, and the write-back (a rename) would
split the links.
A symbolic link is written through. With nothing to do, the model is left
as it was.

PLANFILE is a plan saved with objgc plan --out:
it destroys exactly the objects it lists, in its groups, with the hooks and
notifications it lists, from the plan's hooks dirs and package cache, and
is refused (exit 5) before anything runs if an input, a hook (added,
removed or changed) or a package changed since, or if the plan lists other
work than its inputs give (an edited plan). Run again after it was applied
(its objects gone from the model or flagged destroyed, nothing else to
do), it says so and exits 0. --hooks-dir, --cache-dir and --on-dangling
that differ from the plan's are usage errors.

A hooks dir that does not exist or is not a directory is an error. Objects
destroyed without a destroy hook are counted in the report; --require-hooks
refuses to run when a doomed object has none. Before any hook runs, apply
refuses a hook that someone other than you or root could change (the hook,
its hooks dir or a directory between them is theirs, or writable by group
or others without the sticky bit), and a hook whose id, type or subscriber
id is too long for its argv or environment (Linux: 128 KiB a string).

With no hook source at all (no hooks dir, and no cached package whose
hooks run defining any doomed object's class), apply refuses before it
takes the lock: a forgotten hooks dir would drop every object from the
model and leave its resources in the cloud. Configure a hooks dir, or say
--no-hooks to drop the doomed objects from the model without running any
hook (destroy or notify). --no-hooks with a hooks dir is a usage error;
with a saved plan it is allowed only when the plan lists no hooks dir and
no hook.`,
		Example: `  objgc apply env.json --hooks-dir ./hooks
  objgc apply --snapshot before.json --graph after.json --write after.json
  objgc plan env.json --out plan.json && objgc apply plan.json`,
		Args: maxArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts := *o
			opts.NoColor = global.NoColor
			opts.started = time.Now()
			if err := opts.resolve(cfg, args); err != nil {
				return err
			}
			return runApply(c.Context(), streams, opts)
		},
	}
	o.addFlags(c.Flags())
	return c
}

// applyInputs names what apply reads and writes.
type applyInputs struct {
	*inputs
	target     string // the output as given, "-" for standard output
	onDangling string
	planFile   string
	// file is the file beside which the lock and the journal sit, and
	// which the write-back replaces (not with --write -): target with
	// symbolic links resolved, or with --write - the model file (the
	// --graph file) resolved.
	file string
	// named is file as the user named it (the target, or with --write -
	// the model file), for messages.
	named string
	// inPlace: the target is the model file itself (MODEL or a saved
	// plan's model), so that nothing to do leaves it untouched.
	inPlace bool
	// unchanged: nothing was to be done and the target was not written.
	unchanged bool
	// applied: the saved plan was applied already (destroy.Applied);
	// planObjects is how many objects it lists, planModel the input its
	// objects are looked for in (the model, or the graph).
	applied     bool
	planObjects int
	planModel   string
	// plan is the saved plan run, nil for a model.
	plan *planfile.File
	// warnings are destroy.Report's: what the run could not see.
	warnings []order.Warning
	// read is the model file, read to tell it from a saved plan.
	read *snapshot.Document
}

// readSavedPlan reads the file path once and tells from its bytes whether
// it holds a saved plan (a "format_version" and an "inputs" array at its
// root) or a model. It returns the plan, or nil and the file read, which
// the run uses as the model when the file has not changed by the time the
// lock is held (destroy.ReadInputs): a model is not read twice. A file
// that cannot be read is neither (the run reports it with the model's
// wording).
func readSavedPlan(path string) (*planfile.File, *snapshot.Document, error) {
	if path == "-" {
		return nil, nil, nil
	}
	doc, err := snapshot.ReadDocument(path, nil)
	if errors.Is(err, inputfile.ErrNotRegular) {
		return nil, nil, err // refused before the lock, not after
	}
	if err != nil {
		return nil, nil, nil
	}
	sp, err := planfile.Parse(path, doc.Data)
	if sp == nil && err == nil {
		return nil, doc, nil
	}
	doc.Close()
	return sp, nil, err
}

// planInputs returns the inputs the saved plan sp (read from planFile)
// names: one model, or a snapshot and a graph, each an absolute path
// once read (planfile.Parse).
func planInputs(planFile string, sp *planfile.File) (model, snapshot, graph string, err error) {
	switch {
	case len(sp.Inputs) == 1 && sp.Inputs[0].Role == "model":
		model = sp.Inputs[0].Path
	case len(sp.Inputs) == 2 && sp.Inputs[0].Role == "snapshot" && sp.Inputs[1].Role == "graph":
		snapshot, graph = sp.Inputs[0].Path, sp.Inputs[1].Path
	default:
		return "", "", "", fmt.Errorf("%s: a plan's inputs are one model or a snapshot and a graph", planFile)
	}
	for _, in := range sp.Inputs {
		if in.Path == stdinName || !filepath.IsAbs(in.Path) {
			return "", "", "", fmt.Errorf("%s: input path %q: a saved plan names its inputs by a path relative to its directory or an absolute one", planFile, in.Path)
		}
	}
	return model, snapshot, graph, nil
}

// checkPlanSettings refuses settings that contradict the saved plan sp
// (docs/apply.md): hooks dirs, a package cache or an on-dangling mode other
// than the plan's. The same value is no contradiction: CI may set
// OBJGC_HOOKS_DIR for both plan and apply.
func checkPlanSettings(opts *applyOptions, planFile string, sp *planfile.File) error {
	if opts.hooksDirsFrom != "" {
		if given := absPaths(opts.HooksDirs); !slices.Equal(given, sp.HooksDirs) {
			return usageErrorf("%s %s (%s) differs from the hooks dirs of plan %s (%s): plan again with these hooks dirs, or apply without %s",
				opts.hooksDirsFrom, strings.Join(opts.HooksDirs, ", "), strings.Join(given, ", "), planFile, listOrNone(sp.HooksDirs), opts.hooksDirsFrom)
		}
	}
	if opts.cacheDirFrom != "" {
		if given := absPath(opts.CacheDir); given != sp.CacheDir {
			return usageErrorf("%s %s (%s) differs from the package cache of plan %s (%s): plan again with this cache, or apply without %s",
				opts.cacheDirFrom, opts.CacheDir, given, planFile, sp.CacheDir, opts.cacheDirFrom)
		}
	}
	if opts.onDanglingFrom != "" && opts.OnDangling != sp.OnDangling {
		return usageErrorf("%s %s differs from plan %s (on_dangling %s): plan again with --on-dangling %s",
			opts.onDanglingFrom, opts.OnDangling, planFile, sp.OnDangling, opts.OnDangling)
	}
	return nil
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// resolveApplyInputs works out the inputs, the target and whether a saved
// plan is run, before the lock is taken; the inputs are read after it.
func resolveApplyInputs(opts *applyOptions) (*applyInputs, *planfile.File, error) {
	ai := &applyInputs{onDangling: opts.OnDangling}
	var sp *planfile.File
	if opts.Model != "" {
		var err error
		if sp, ai.read, err = readSavedPlan(opts.Model); err != nil {
			return nil, nil, err
		}
	}
	if sp != nil {
		if opts.Snapshot != "" || opts.Graph != "" {
			return nil, nil, usageErrorf("a saved plan names its inputs: give PLANFILE alone, not with --snapshot or --graph")
		}
		ai.planFile = opts.Model
		var err error
		if opts.Model, opts.Snapshot, opts.Graph, err = planInputs(ai.planFile, sp); err != nil {
			return nil, nil, err
		}
		if err := checkPlanSettings(opts, ai.planFile, sp); err != nil {
			return nil, nil, err
		}
		ai.onDangling = sp.OnDangling
		// What plan was told of hooks holds for its apply; apply's own
		// flags can only add to it (checkNoHooks).
		opts.NoHooks = opts.NoHooks || sp.NoHooks
		opts.RequireHooks = opts.RequireHooks || sp.RequireHooks
		ai.planModel = sp.Inputs[len(sp.Inputs)-1].Path
		ai.plan = sp
		for _, g := range sp.Groups {
			ai.planObjects += len(g.Objects)
		}
	}
	switch {
	case opts.Write != "":
		ai.target = opts.Write
	case opts.Model == "-":
		return nil, nil, usageErrorf("a model read from standard input needs --write FILE")
	case opts.Model != "":
		ai.target = opts.Model
	case opts.Snapshot != "" || opts.Graph != "":
		return nil, nil, usageErrorf("--snapshot and --graph need --write FILE: there is no single model to rewrite")
	}
	if err := checkApplyOutput(opts, ai); err != nil {
		return nil, nil, err
	}
	return ai, sp, nil
}

// checkApplyOutput checks the target before the lock is taken (see
// checkOutput) and sets ai.file and ai.inPlace. With --write -, the model
// goes to standard output and the lock and journal sit beside the model
// file (the --graph file), which must then be a file: an apply that
// writes to standard output still excludes a concurrent apply of the same
// model and still resumes (docs/apply.md).
func checkApplyOutput(opts *applyOptions, ai *applyInputs) error {
	if ai.target == "-" {
		base := opts.Model
		if base == "" {
			base = opts.Graph
		}
		if base == "-" {
			what := "a model"
			if opts.Model == "" {
				what = "a --graph"
			}
			return usageErrorf("--write - with %s read from standard input: there is no file to lock and journal beside; give MODEL as a file or --write FILE", what)
		}
		st, err := os.Stat(base)
		if err != nil {
			return fmt.Errorf("reading %s: %w", base, unwrapPath(err))
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("--write - needs the model to be a regular file to lock and journal beside; %s is not (%s)", base, fileKind(st.Mode()))
		}
		file, err := filepath.EvalSymlinks(base)
		if err != nil {
			return fmt.Errorf("reading %s: %w", base, unwrapPath(err))
		}
		if err := probeFolder(filepath.Dir(file), file); err != nil {
			return fmt.Errorf("--write -: the lock and journal go beside %s, and folder %s is not writable: %v", base, filepath.Dir(file), unwrapPath(err))
		}
		ai.file, ai.named = file, base
		return nil
	}
	if opts.Write == "" {
		// In place: a model that is not there would get a lock file.
		if _, err := os.Stat(ai.target); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: no such file; expected a Murano model (JSON)", ai.target)
		}
	}
	// The model and the --graph input are what --write rewrites in place.
	files := []namedFile{{"the model input", opts.Model, true}, {"the --snapshot input", opts.Snapshot, false},
		{"the --graph input", opts.Graph, true}, {"the saved plan", ai.planFile, false}}
	file, err := checkOutput("--write", ai.target, files, "write the model elsewhere")
	if err != nil {
		return err
	}
	ai.named = ai.target
	ai.file = file
	ai.inPlace = opts.Model != "" && opts.Model != "-" && (opts.Write == "" || sameFile(opts.Write, opts.Model))
	return nil
}

func runApply(ctx context.Context, streams *IO, opts applyOptions) (err error) {
	if err := checkQuietVerbose(opts.Quiet, opts.Verbose); err != nil {
		return err
	}
	// Apply holds the plan's model and index for its whole run: the
	// collector's target for it (docs/decisions.md, "A plan's memory").
	defer memtune.Apply().Restore()
	if err := checkApplyFlags(&opts); err != nil {
		return err
	}
	ai, sp, err := resolveApplyInputs(&opts)
	if err != nil {
		return err
	}
	if err := checkJUnitOut(&opts, ai); err != nil {
		return err
	}
	// From here on every exit leaves a JUnit report: a run that ends
	// before its report names why (failedJUnit).
	var fj *failedJUnit
	if opts.JUnit != "" {
		fj = &failedJUnit{opts: &opts, ai: ai, sp: sp}
		defer fj.write(&err)
	}
	// A named pipe would hold the lock while the read waits for a writer.
	for _, in := range []string{opts.Model, opts.Snapshot, opts.Graph} {
		if err := snapshot.CheckInput(in); in != "" && err != nil {
			return err
		}
	}
	// After the outputs' checks, which name the flag at fault.
	if err := destroy.CheckLinks(ai.named); err != nil {
		return err
	}
	if err := checkOnDangling(ai.onDangling); err != nil {
		return err
	}
	if err := checkNoHooks(&opts, ai.planFile, sp); err != nil {
		return err
	}
	finder, err := applyFinder(streams, &opts, sp)
	if err != nil {
		return err
	}
	if finder.Packages != nil {
		defer finder.Packages.Close()
	}
	if err := checkInputFlags(opts.Model, opts.Snapshot, opts.Graph); err != nil {
		return err
	}

	progress := newProgressLine(streams)
	progress.on = progress.on && !opts.Quiet
	defer progress.Done()
	var status *statusLine
	runHook := hook.Run
	if !streams.IsTTYErr && !opts.Quiet && opts.StatusInterval > 0 {
		status = startStatusLine(progress.Println, opts.StatusInterval)
		defer status.Stop()
		runHook = status.RunHook
	}
	running := &runningHooks{}
	runHook = running.wrap(runHook)
	ro := newRunOptions(streams, &opts, ai, sp, finder, progress, status, runHook)
	ro.Prepared = fj.prepared
	if sp == nil && !opts.AutoApprove && streams.IsTTYIn && streams.IsTTYErr && opts.Model != "-" && opts.Snapshot != "-" && opts.Graph != "-" {
		ro.Approve = func(prep *destroy.Prepared) error { return askApproval(streams, ai, prep) }
	}
	stopWatch := watchInterrupts(ctx, streams.Interrupt, running, opts.HookTimeout, opts.HookGrace, progress.Println)
	defer stopWatch()
	hooksDone := ro.HooksDone
	ro.HooksDone = func() {
		stopWatch()
		hooksDone()
	}
	rep, err := destroy.Run(ctx, ro)
	if err != nil {
		fj.cause(err)
		return applyError(err)
	}
	defer rep.Inputs.Close()
	// The report reads the model (types, paths): a mapped one truncated
	// meanwhile is an error naming it.
	defer snapshot.Protect(&err, rep.Inputs.Docs)()
	ai.unchanged = rep.Unchanged
	ai.applied = rep.Applied
	ai.warnings = rep.Warnings
	result := rep.Result
	fj.done()
	if err := writeApplyReport(reportStreams(streams, ai), opts, ai, rep.Plan, result); err != nil {
		return err
	}
	switch {
	case result.Interrupted:
		return fmt.Errorf("%w: the model was written for what completed; run apply again to finish", destroy.ErrInterrupted)
	case result.Count(destroy.OutcomeFailed)+result.Count(destroy.OutcomeBlocked)+result.Count(destroy.OutcomePending) > 0,
		result.FailedNotifications() > 0:
		// A failed notification does not stop the destruction (Murano
		// mutes handler errors), but it is not a success either: its
		// publisher is gone after this run, so nothing will run the
		// handler again, and the JUnit report shows it as a failure.
		return &exitError{code: ExitIncomplete}
	}
	return nil
}

// checkApplyFlags refuses flags apply cannot run with, before any file is
// looked at.
func checkApplyFlags(opts *applyOptions) error {
	switch opts.Format {
	case "text", "json":
	default:
		return usageErrorf("--format must be text or json, not %q", opts.Format)
	}
	if err := checkOnDangling(opts.OnDangling); err != nil {
		return err
	}
	if opts.Parallelism < 1 {
		return usageErrorf("--parallelism must be at least 1, not %d", opts.Parallelism)
	}
	if opts.Model == "" && opts.Snapshot == "" && opts.Graph == "" {
		return usageErrorf("no model given: objgc apply MODEL, objgc apply PLANFILE, or --snapshot FILE --graph FILE --write FILE")
	}
	return nil
}

// applyFinder returns the finder of the hooks apply runs: those of the
// saved plan sp's hooks dirs and cache when there is one, else of the
// flags'. A hooks dir that is not there is refused before anything is
// touched; a saved plan runs with its own (destroy.Run checks them).
func applyFinder(streams *IO, opts *applyOptions, sp *planfile.File) (*destroy.HookFinder, error) {
	dirs, cache, cacheFrom := opts.HooksDirs, opts.CacheDir, opts.cacheDirFrom
	if sp != nil {
		dirs, cache, cacheFrom = sp.HooksDirs, sp.CacheDir, ""
	} else if err := checkHooksDirs(opts.HooksDirs, opts.hooksDirsFrom); err != nil {
		return nil, err
	}
	if opts.NoHooks && (sp == nil || sp.NoHooks) {
		// No hooks dir, no package cache: nothing is looked up, so
		// nothing runs.
		return &destroy.HookFinder{}, nil
	}
	return newFinder(streams, dirs, cache, cacheFrom)
}

// newRunOptions turns apply's flags and inputs into destroy.Run's
// options: hooks run through runHook, progress on the progress and
// status lines.
func newRunOptions(streams *IO, opts *applyOptions, ai *applyInputs, sp *planfile.File, finder *destroy.HookFinder,
	progress *progressLine, status *statusLine, runHook destroy.HookRunner) destroy.RunOptions {
	var stdout io.Writer
	if ai.target == "-" {
		stdout = streams.Out
	}
	hooksDone := func() {
		status.Stop()
		progress.Done()
	}
	return destroy.RunOptions{
		ApplyOptions: destroy.ApplyOptions{
			Finder:      finder,
			Parallelism: opts.Parallelism,
			HookTimeout: opts.HookTimeout,
			FailFast:    opts.FailFast,
			Force:       opts.Force,
			Env:         streams.environ(),
			Grace:       opts.HookGrace,
			Stderr:      hookLines(*opts, progress),
			RunHook:     runHook,
			Progress: func(pr destroy.Progress) {
				status.Progress(pr)
				if pr.Group == 0 {
					progress.Update("objgc apply: notifications %d/%d", pr.NotificationsDone, pr.Notifications)
					return
				}
				progress.Update("objgc apply: group %d (%d of %d), %d/%d objects done, %d failed", pr.Group, pr.Step, pr.Groups, pr.ObjectsDone, pr.Objects, pr.Failed)
			},
			Drain: streams.Interrupt,
		},
		Model: opts.Model, Snapshot: opts.Snapshot, Graph: opts.Graph,
		Stdin: interruptible(streams.In, streams.Interrupt), Read: ai.read,
		Plan: sp, PlanPath: ai.planFile,
		File:        ai.file,
		InPlace:     ai.inPlace,
		LockTimeout: opts.LockTimeout,
		LockWaiting: func(lock, holder string, timeout time.Duration) {
			if !opts.Quiet {
				fmt.Fprintf(streams.Err, "objgc: waiting up to %s for the lock %s, held by %s (--lock-timeout; an interrupt stops waiting)\n",
					timeout, term(lock), term(holder))
			}
		},
		OnDanglingKeep: ai.onDangling == "keep",
		RequireHooks:   opts.RequireHooks,
		NoHooks:        opts.NoHooks,
		Resumed: func(resume *journal.Resume) {
			for _, note := range resume.Notes {
				fmt.Fprintf(streams.Err, "objgc: note: %s\n", term(note))
			}
			if resume.Resumed && !opts.Quiet {
				fmt.Fprintf(streams.Err, "objgc: note: resuming the run started %s by pid %d: %d hooks done are not run again\n",
					resume.Started.Format(time.RFC3339), resume.PID, len(resume.Done))
			}
		},
		// The progress line is erased before anything else is printed:
		// the report and every message share a terminal with it.
		HooksDone: hooksDone,
		Stdout:    stdout,
	}
}

// checkNoHooks refuses --no-hooks where it contradicts what apply was
// told: hooks dirs (from wherever they were set), or a saved plan that
// lists hooks dirs or hooks (the plan is the whole instruction; plan
// again without them).
func checkNoHooks(opts *applyOptions, planFile string, sp *planfile.File) error {
	if !opts.NoHooks {
		return nil
	}
	if opts.RequireHooks {
		return checkNoHooksDirs(true, true, nil, "")
	}
	if sp != nil {
		if len(sp.HooksDirs) > 0 {
			return usageErrorf("--no-hooks runs no hook, and plan %s looks for hooks in %s: apply it without --no-hooks, or plan again without hooks dirs",
				planFile, strings.Join(sp.HooksDirs, ", "))
		}
		if h := planHook(sp); h != "" {
			return usageErrorf("--no-hooks runs no hook, and plan %s lists hook %s: apply it without --no-hooks", planFile, h)
		}
		return nil
	}
	return checkNoHooksDirs(true, opts.RequireHooks, opts.HooksDirs, opts.hooksDirsFrom)
}

// checkNoHooksDirs refuses --no-hooks (noHooks) with --require-hooks or
// with hooks dirs (dirs, set by from): plan and apply alike.
func checkNoHooksDirs(noHooks, requireHooks bool, dirs []string, from string) error {
	switch {
	case !noHooks:
		return nil
	case requireHooks:
		return usageErrorf("--no-hooks runs no hook, and --require-hooks refuses a doomed object without a destroy hook: give one or the other")
	case len(dirs) > 0:
		return usageErrorf("--no-hooks runs no hook, and %s gives hooks dirs (%s): give one or the other",
			from, strings.Join(dirs, ", "))
	}
	return nil
}

// planHook returns the path of the first hook a saved plan lists (destroy
// or notify), "" when it lists none.
func planHook(sp *planfile.File) string {
	for _, g := range sp.Groups {
		for _, o := range g.Objects {
			if len(o.Hooks) > 0 {
				return o.Hooks[0].Path
			}
		}
	}
	for _, n := range sp.Notifications {
		if n.Hook != nil {
			return n.Hook.Path
		}
	}
	return ""
}

// newFinder returns the hook finder of dirs and of the package cache
// dir (openPackages; from says where cache was set); the caller closes
// its Packages. The error is openPackages'.
func newFinder(streams *IO, dirs []string, cache, from string) (*destroy.HookFinder, error) {
	finder := &destroy.HookFinder{Dirs: dirs}
	session, err := openPackages(streams, cache, from)
	if err != nil {
		return nil, err
	}
	if session != nil {
		finder.Packages = session
	}
	return finder, nil
}

// applyError renders the refusals of destroy.Run (dangling references,
// doomed objects without a destroy hook) as messages; exitCode maps the
// rest.
func applyError(err error) error {
	var de *destroy.DanglingError
	var me *destroy.MissingHooksError
	var ne *destroy.NoHookSourceError
	switch {
	case errors.As(err, &ne):
		which, them := fmt.Sprintf("any of the %d doomed objects", ne.Doomed), "them"
		if ne.Doomed == 1 {
			which, them = "the doomed object", "it"
		}
		if ne.Plan != "" {
			return fmt.Errorf("plan %s has no hook source: no hooks dir, and no cached package whose hooks run defines the class of %s; apply would drop %s from the model without destroying anything in the cloud; plan again with --hooks-dir DIR, or apply the plan with --no-hooks if dropping %s without hooks is meant",
				term(ne.Plan), which, them, them)
		}
		return fmt.Errorf("no hook source: no hooks dir is configured, and no cached package whose hooks run defines the class of %s; apply would drop %s from the model without destroying anything in the cloud; configure a hooks dir (--hooks-dir DIR, hooks.dirs in the configuration, or OBJGC_HOOKS_DIR), add the classes' packages to the cache (objgc cache add; the hooks of packages murano-engine unpacked never run), or say --no-hooks if dropping %s from the model without hooks is meant",
			which, them, them)
	case errors.As(err, &de):
		n := len(de.Refs)
		lines := make([]string, 0, n+2)
		lines = append(lines, fmt.Sprintf("%d dangling %s to doomed objects; Murano's engine would refuse this model:", n, plural(n, "reference", "references")))
		for _, d := range de.Refs {
			lines = append(lines, fmt.Sprintf("  %s references doomed %s at %s", term(orDash(d.ReferrerID)), term(d.DoomedID), term(d.Path)))
		}
		lines = append(lines, "remove the references, or use --on-dangling=keep to destroy the objects and keep them flagged destroyed")
		return newLinesError(lines)
	case errors.As(err, &me):
		missing := make([]string, len(me.Objects))
		for k, o := range me.Objects {
			missing[k] = term(orDash(o.Type)) + " " + term(o.ID)
		}
		shown, more := missing, ""
		if len(missing) > maxDifferences {
			shown, more = missing[:maxDifferences], fmt.Sprintf(" and %d more", len(missing)-maxDifferences)
		}
		return fmt.Errorf("--require-hooks: %d doomed %s no destroy hook: %s%s", len(missing), plural(len(missing), "object has", "objects have"), strings.Join(shown, ", "), more)
	}
	return err
}
