package cmd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	"github.com/tidwall/gjson"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/diff"
)

type applyOptions struct {
	Model       string
	Snapshot    string        `mapstructure:"-"` // flag only
	Graph       string        `mapstructure:"-"` // flag only
	Write       string        `mapstructure:"-"` // flag only
	Parallelism int           `mapstructure:"parallelism"`
	HookTimeout time.Duration `mapstructure:"hook-timeout"`
	HookGrace   time.Duration `mapstructure:"hook-grace"`
	FailFast    bool          `mapstructure:"fail-fast"`
	Force       bool          `mapstructure:"-"` // flag only
	LockTimeout time.Duration `mapstructure:"lock-timeout"`
	OnDangling  string        `mapstructure:"on-dangling"`
	Format      string        `mapstructure:"format"`
	NoColor     bool          `mapstructure:"no-color"`
	// RequireHooks refuses to run when a doomed object has no destroy hook.
	RequireHooks bool `mapstructure:"require-hooks"`
	HooksDirs    []string
	CacheDir     string
	// hooksDirsFrom, cacheDirFrom and onDanglingFrom name where these
	// settings came from ("" for the default): a saved plan fixes them,
	// and a setting that contradicts it is a usage error.
	hooksDirsFrom, cacheDirFrom, onDanglingFrom string
	// JUnit: also write the report as JUnit XML to this file (cmd/junit.go).
	JUnit   string    `mapstructure:"-"` // flag only
	started time.Time // when the run began, for the JUnit timestamp
	// Quiet: errors and warnings only; Verbose: every hook run too
	// (cmd/quiet.go).
	Quiet   bool `mapstructure:"quiet"`
	Verbose bool `mapstructure:"verbose"`
}

func newApplyCmd(streams *IO) *cobra.Command {
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

MODEL is rewritten in place unless --write says otherwise; with --snapshot and
--graph, --write is required. --write - writes the model to standard output
(the report then goes to stderr). The output is checked before the lock is
taken: a directory, a file that is not a regular one, a missing or
unwritable folder, or the --snapshot input or the saved plan is refused.
A symbolic link is written through. With nothing to do, the model is left
as it was.

PLANFILE is a plan saved with objgc plan --out:
it runs exactly the hooks the plan lists, from the plan's hooks dirs and
package cache, and is refused (exit 5) before anything runs if an input, a
hook (added, removed or changed) or a package changed since. --hooks-dir,
--cache-dir and --on-dangling that differ from the plan's are usage errors.

A hooks dir that does not exist or is not a directory is an error. Objects
destroyed without a destroy hook are counted in the report; --require-hooks
refuses to run when a doomed object has none.`,
		Example: `  objgc apply env.json --hooks-dir ./hooks
  objgc apply --snapshot before.json --graph after.json --write after.json
  objgc plan env.json --out plan.json && objgc apply plan.json`,
		Args: maxArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			v, err := newConfig(c)
			if err != nil {
				return err
			}
			var opts applyOptions
			if err := v.Unmarshal(&opts); err != nil {
				return usageErrorf("%v", err)
			}
			if len(args) == 1 {
				opts.Model = args[0]
			}
			// Flag only (docs/config.md): not bound to viper.
			opts.Snapshot, _ = c.Flags().GetString("snapshot")
			opts.Graph, _ = c.Flags().GetString("graph")
			opts.Write, _ = c.Flags().GetString("write")
			opts.Force, _ = c.Flags().GetBool("force")
			opts.JUnit, _ = c.Flags().GetString("junit")
			opts.started = time.Now()
			if err := checkJUnitOut(&opts); err != nil {
				return err
			}
			opts.HooksDirs = listSetting(v, "hooks.dirs")
			if opts.CacheDir, err = cacheDir(v); err != nil {
				return err
			}
			opts.hooksDirsFrom = settingFrom(c, v, streams.Getenv, "hooks-dir")
			opts.cacheDirFrom = settingFrom(c, v, streams.Getenv, "cache-dir")
			opts.onDanglingFrom = settingFrom(c, v, streams.Getenv, "on-dangling")
			return runApply(c.Context(), streams, opts)
		},
	}
	f := c.Flags()
	addInputFlags(c)
	f.String("write", "", "write the model to `FILE`, - for standard output (default: rewrite MODEL in place)")
	f.StringArray("hooks-dir", nil, "look for hooks in `DIR` (repeatable): DIR/CLASS/destroy, DIR/CLASS/notify/HANDLER")
	f.Int("parallelism", 1, "destroy up to `N` objects of one group at a time")
	f.Duration("hook-timeout", 10*time.Minute, "kill a hook's process group after `DURATION`")
	f.Duration("hook-grace", 10*time.Second, "after a hook times out or a second interrupt, wait `DURATION` between SIGTERM and SIGKILL of its process group")
	f.Bool("fail-fast", false, "start nothing new after the first failed destroy")
	f.Bool("force", false, "mark objects whose destroy hooks failed destroyed anyway")
	f.Duration("lock-timeout", 0, "wait up to `DURATION` for the lock on the target (0: fail at once)")
	f.String("on-dangling", "error", "references to doomed objects: error (refuse to run) or keep (destroy them and keep them flagged destroyed)")
	f.String("format", "text", "report format: text or json")
	f.String("cache-dir", "", "the package cache `DIR` (default <user cache dir>/objgc)")
	f.Bool("require-hooks", false, "refuse to run when a doomed object has no destroy hook")
	f.BoolP("quiet", "q", false, "print only errors and warnings: no progress, no hook output as it comes, no report when all went well")
	f.BoolP("verbose", "v", false, "also report every hook run, with its exit status and duration, and every notification")
	f.String("junit", "", "also write the report as JUnit XML to `FILE` (one test case a doomed object)")
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
	// inPlace: the target is the model file itself (MODEL or a saved
	// plan's model), so that nothing to do leaves it untouched.
	inPlace bool
	// unchanged: nothing was to be done and the target was not written.
	unchanged bool
}

// readSavedPlan returns the plan saved in path, or nil when path holds a
// model rather than a plan.
func readSavedPlan(path string) (*planDocument, error) {
	if path == "-" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil // ReadDocument reports it with the model's wording
	}
	if !gjson.GetBytes(data, "format_version").Exists() || !gjson.GetBytes(data, "inputs").IsArray() {
		return nil, nil
	}
	var sp planDocument
	if v := gjson.GetBytes(data, "format_version").String(); v != PlanFormatVersion {
		return nil, fmt.Errorf("%s: plan format_version %q; this objgc reads %q: plan again", path, v, PlanFormatVersion)
	}
	if err := json.Unmarshal(data, &sp); err != nil {
		return nil, fmt.Errorf("%s: not a valid objgc plan: %w", path, err)
	}
	return &sp, nil
}

// errStalePlan is the exit-5 error of a saved plan whose inputs changed.
func errStalePlan(planFile, input, was, now string) error {
	return &exitError{code: ExitStalePlan, err: fmt.Errorf("plan %s is stale: %s changed since it was planned (sha256 %s, now %s); plan again",
		planFile, input, short(was), short(now))}
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// checkPlanSettings refuses settings that contradict the saved plan sp
// (docs/apply.md): hooks dirs, a package cache or an on-dangling mode other
// than the plan's. The same value is no contradiction: CI may set
// OBJGC_HOOKS_DIR for both plan and apply.
func checkPlanSettings(opts *applyOptions, planFile string, sp *planDocument) error {
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
func resolveApplyInputs(opts *applyOptions) (*applyInputs, *planDocument, error) {
	ai := &applyInputs{onDangling: opts.OnDangling}
	var sp *planDocument
	if opts.Model != "" {
		var err error
		if sp, err = readSavedPlan(opts.Model); err != nil {
			return nil, nil, err
		}
	}
	if sp != nil {
		if opts.Snapshot != "" || opts.Graph != "" {
			return nil, nil, usageErrorf("a saved plan names its inputs: give PLANFILE alone, not with --snapshot or --graph")
		}
		ai.planFile = opts.Model
		switch {
		case len(sp.Inputs) == 1 && sp.Inputs[0].Role == "model":
			opts.Model = sp.Inputs[0].Path
		case len(sp.Inputs) == 2 && sp.Inputs[0].Role == "snapshot" && sp.Inputs[1].Role == "graph":
			opts.Model, opts.Snapshot, opts.Graph = "", sp.Inputs[0].Path, sp.Inputs[1].Path
		default:
			return nil, nil, fmt.Errorf("%s: a plan's inputs are one model or a snapshot and a graph", ai.planFile)
		}
		for _, in := range sp.Inputs {
			if in.Path == stdinName || !filepath.IsAbs(in.Path) {
				return nil, nil, fmt.Errorf("%s: input path %q: a saved plan names its inputs by absolute path", ai.planFile, in.Path)
			}
		}
		if err := checkPlanSettings(opts, ai.planFile, sp); err != nil {
			return nil, nil, err
		}
		ai.onDangling = sp.OnDangling
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
		ai.file = file
		return nil
	}
	if opts.Write == "" {
		// In place: a model that is not there would get a lock file.
		if _, err := os.Stat(ai.target); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: no such file; expected a Murano model (JSON)", ai.target)
		}
	}
	avoid := []namedFile{{"the --snapshot input", opts.Snapshot}, {"the saved plan", ai.planFile}}
	file, err := checkOutput("--write", ai.target, avoid, "write the model elsewhere")
	if err != nil {
		return err
	}
	ai.file = file
	ai.inPlace = opts.Model != "" && opts.Model != "-" && (opts.Write == "" || sameFile(opts.Write, opts.Model))
	return nil
}

func runApply(ctx context.Context, streams *IO, opts applyOptions) error {
	if opts.Quiet && opts.Verbose {
		return usageErrorf("--quiet and --verbose contradict each other; give one")
	}
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
	ai, sp, err := resolveApplyInputs(&opts)
	if err != nil {
		return err
	}
	if err := checkOnDangling(ai.onDangling); err != nil {
		return err
	}
	// Before the lock: a saved plan that no longer holds, or a hooks dir
	// that is not there, is refused before anything is touched.
	var finder *destroy.HookFinder
	if sp != nil {
		var diffs []string
		finder, diffs = checkPlanHooks(ctx, streams, sp)
		if finder.Packages != nil {
			defer finder.Packages.Close()
		}
		if diffs = append(checkPlanInputs(sp), diffs...); len(diffs) > 0 {
			return staleError(ai.planFile, diffs)
		}
	} else if err := checkHooksDirs(opts.HooksDirs, opts.hooksDirsFrom); err != nil {
		return err
	}
	// The first SIGINT or SIGTERM ends a wait for the lock: nothing has
	// started yet, so there is nothing to drain.
	lockCtx, cancelLock := streams.interrupted(ctx)
	unlock, err := destroy.LockTarget(lockCtx, ai.file, opts.LockTimeout)
	cancelLock()
	if err != nil {
		if errors.Is(err, destroy.ErrLocked) {
			return &exitError{code: ExitLocked, err: err}
		}
		if errors.Is(err, context.Canceled) {
			return &exitError{code: ExitInterrupted, err: fmt.Errorf("interrupted while %w; nothing was done", err)}
		}
		return err
	}
	defer unlock()

	in, err := loadInputs(streams, opts.Model, opts.Snapshot, opts.Graph)
	if err != nil {
		return err
	}
	ai.inputs = in
	if sp != nil {
		for k, d := range in.docs() {
			if d.SHA256() != sp.Inputs[k].SHA256 {
				return errStalePlan(ai.planFile, d.Name, sp.Inputs[k].SHA256, d.SHA256())
			}
		}
	}
	if finder == nil {
		finder = &destroy.HookFinder{Dirs: opts.HooksDirs}
		if session := openPackages(streams, opts.CacheDir); session != nil {
			defer session.Close()
			finder.Packages = session
		}
	}
	p := destroy.NewPlan(diff.Compare(in.Snapshot, in.Incoming))
	if n := len(p.Diff.Dangling); n > 0 && ai.onDangling == "error" {
		var b strings.Builder
		fmt.Fprintf(&b, "%d dangling %s to doomed objects; Murano's engine would refuse this model:", n, plural(n, "reference", "references"))
		for _, d := range p.Diff.Dangling {
			fmt.Fprintf(&b, "\n  %s references doomed %s at %s", term(orDash(d.ReferrerID)), term(d.DoomedID), term(d.Path))
		}
		b.WriteString("\nremove the references, or use --on-dangling=keep to destroy the objects and keep them flagged destroyed")
		return errors.New(b.String())
	}
	if opts.RequireHooks {
		if err := requireHooks(ctx, p, finder); err != nil {
			return err
		}
	}

	// Nothing to do (nothing doomed, nothing dropped: no hook, no patch)
	// needs no journal, unless one is there to resume or refuse.
	if len(p.Objects) == 0 && len(p.Diff.Dropped) == 0 {
		if _, err := os.Lstat(destroy.JournalPath(ai.file)); errors.Is(err, fs.ErrNotExist) {
			return applyNothing(streams, opts, ai, in, p)
		}
	}

	var journalInputs []destroy.JournalInput
	for _, d := range in.docs() {
		journalInputs = append(journalInputs, destroy.JournalInput{Path: d.Name, SHA256: d.SHA256()})
	}
	journal, resume, err := destroy.OpenJournal(destroy.JournalPath(ai.file), journalInputs)
	if err != nil {
		return err
	}
	defer journal.Close()
	for _, note := range resume.Notes {
		fmt.Fprintf(streams.Err, "objgc: %s\n", term(note))
	}
	if resume.Resumed && !opts.Quiet {
		fmt.Fprintf(streams.Err, "objgc: resuming the run started %s by pid %d: %d hooks done are not run again\n",
			resume.Started.Format(time.RFC3339), resume.PID, len(resume.Done))
	}
	doomedFile, err := writeDoomedFile(p)
	if err != nil {
		return err
	}
	defer os.Remove(doomedFile)

	progress := newProgressLine(streams)
	progress.on = progress.on && !opts.Quiet
	defer progress.Done()
	result, err := destroy.Apply(ctx, p, destroy.ApplyOptions{
		Finder:      finder,
		Parallelism: opts.Parallelism,
		HookTimeout: opts.HookTimeout,
		FailFast:    opts.FailFast,
		Force:       opts.Force,
		Env:         os.Environ(),
		DoomedFile:  doomedFile,
		Grace:       opts.HookGrace,
		Stderr:      hookLines(opts, progress),
		Progress: func(pr destroy.Progress) {
			if pr.Group == 0 {
				progress.Update("objgc apply: notifications %d/%d", pr.NotificationsDone, pr.Notifications)
				return
			}
			progress.Update("objgc apply: group %d/%d, %d/%d objects done, %d failed", pr.Group, pr.Groups, pr.ObjectsDone, pr.Objects, pr.Failed)
		},
		Drain:   streams.Interrupt,
		Journal: journal,
		Resume:  resume,
	})
	// The progress line is erased before anything else is printed: the
	// report and every message share a terminal with it.
	progress.Done()
	if err != nil {
		return fmt.Errorf("apply stopped: %w; nothing was written, the journal %s keeps what was done", err, journal.Path())
	}

	attributes := envelopeAttributes(in)
	outcome := destroy.Outcome{Destroyed: result.Destroyed(), Patches: result.Patches(p)}
	var outputs []destroy.JournalInput
	written, err := destroy.BuildWriteBack(p, outcome, attributes, ai.onDangling == "keep")
	if err != nil {
		return err
	}
	if ai.target == "-" {
		// No rename to record: the commit record follows the last byte.
		sum, err := writeStdout(streams, func(w io.Writer) error { return writeModel(w, in, written) })
		if err != nil {
			return err
		}
		outputs = []destroy.JournalInput{{Path: "-", SHA256: sum}}
	} else {
		target, err := filepath.Abs(ai.file)
		if err != nil {
			return err
		}
		err = writeFileCommitted(ai.file, 0o644, func(w io.Writer) error {
			return writeModel(w, in, written)
		}, func(sum string) error {
			outputs = []destroy.JournalInput{{Path: target, SHA256: sum}}
			return journal.Committing(outputs)
		})
		if err != nil {
			return err
		}
	}
	if err := journal.Commit(outputs); err != nil {
		return err
	}
	if err := journal.Remove(); err != nil {
		return err
	}

	if err := writeApplyReport(reportStreams(streams, ai), opts, ai, p, result); err != nil {
		return err
	}
	switch {
	case result.Interrupted:
		return &exitError{code: ExitInterrupted, err: errors.New("interrupted: the model was written for what completed; run apply again to finish")}
	case result.Count(destroy.OutcomeFailed)+result.Count(destroy.OutcomeBlocked)+result.Count(destroy.OutcomePending) > 0:
		return &exitError{code: ExitIncomplete}
	}
	return nil
}

// applyNothing ends an apply with nothing to do: no hook runs and no
// journal is made. A model rewritten in place is left as it was (bytes and
// mtime), and the report says so; another target (--write FILE, --write -)
// still gets the model.
func applyNothing(streams *IO, opts applyOptions, ai *applyInputs, in *inputs, p *destroy.Plan) error {
	result := &destroy.ApplyResult{}
	if ai.inPlace {
		ai.unchanged = true
		return writeApplyReport(reportStreams(streams, ai), opts, ai, p, result)
	}
	written, err := destroy.BuildWriteBack(p, destroy.Outcome{}, envelopeAttributes(in), ai.onDangling == "keep")
	if err != nil {
		return err
	}
	write := func(w io.Writer) error { return writeModel(w, in, written) }
	if ai.target == "-" {
		_, err = writeStdout(streams, write)
	} else {
		err = writeFileAtomic(ai.file, 0o644, write)
	}
	if err != nil {
		return err
	}
	return writeApplyReport(reportStreams(streams, ai), opts, ai, p, result)
}

// writeStdout writes the model to standard output (--write -) and
// returns the sha256 of what it wrote.
func writeStdout(streams *IO, write func(io.Writer) error) (string, error) {
	sum := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(streams.Out, sum), 1<<20)
	if err := write(bw); err != nil {
		return "", fmt.Errorf("writing the model to standard output: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return "", fmt.Errorf("writing the model to standard output: %w", err)
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}

// reportStreams are the streams the report goes to: with --write - the
// model holds standard output, and the report goes to stderr (coloured
// when stderr is a terminal).
func reportStreams(streams *IO, ai *applyInputs) *IO {
	if ai.target != "-" {
		return streams
	}
	s := *streams
	s.Out, s.IsTTYOut = streams.Err, streams.IsTTYErr
	return &s
}

// requireHooks refuses (--require-hooks) a plan in which a doomed object
// has no destroy hook, naming the first of them and how many there are.
func requireHooks(ctx context.Context, p *destroy.Plan, finder *destroy.HookFinder) error {
	var missing []string
	snap := p.Diff.Snapshot
	for _, g := range p.Groups {
		for _, i := range g.Objects {
			o := &p.Objects[i]
			if len(finder.DestroyHooks(ctx, snap.Objects[o.Snapshot].Type())) == 0 {
				missing = append(missing, term(orDash(o.Type))+" "+term(o.ID))
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	shown, more := missing, ""
	if len(missing) > maxDifferences {
		shown, more = missing[:maxDifferences], fmt.Sprintf(" and %d more", len(missing)-maxDifferences)
	}
	return fmt.Errorf("--require-hooks: %d doomed %s no destroy hook: %s%s", len(missing), plural(len(missing), "object has", "objects have"), strings.Join(shown, ", "), more)
}

// writeDoomedFile writes every doomed id, one a line, for OBJGC_DOOMED (a
// hook's isDoomed). The list is unambiguous by construction: the reader
// refuses ids holding a control character, LF and CR included, so that
// grep -qxF matches exactly one id (docs/hooks.md).
func writeDoomedFile(p *destroy.Plan) (string, error) {
	f, err := os.CreateTemp("", "objgc-doomed-*.txt")
	if err != nil {
		return "", fmt.Errorf("writing the doomed list: %w", err)
	}
	var b bytes.Buffer
	for _, o := range p.Objects {
		b.WriteString(o.ID)
		b.WriteByte('\n')
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", fmt.Errorf("writing the doomed list: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("writing the doomed list: %w", err)
	}
	return f.Name(), nil
}

// writeModel writes the model apply wrote back: the envelope, or, when the
// model file is an engine task ({"model": envelope, ...}), the task with
// the envelope in place of its model and every other byte as it was
// (docs/writeback.md).
func writeModel(w io.Writer, in *inputs, m *destroy.WrittenModel) error {
	// The reader decided the form: the trees of an engine task sit under
	// $.model (a document with Objects and a "model" key is an envelope).
	if in.Model != nil && strings.HasPrefix(in.Incoming.Path, "$.model.") {
		data := in.Model.Data
		if r := gjson.GetBytes(data, "model"); r.IsObject() && r.Index > 0 {
			lineStart := bytes.LastIndexByte(data[:r.Index], '\n') + 1
			line := data[lineStart:r.Index]
			indent := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
			if _, err := w.Write(data[:r.Index]); err != nil {
				return err
			}
			if _, err := m.WriteNested(w, string(indent)); err != nil {
				return err
			}
			_, err := w.Write(data[r.Index+len(r.Raw):])
			return err
		}
	}
	_, err := m.WriteTo(w)
	return err
}

// envelopeAttributes returns the raw Attributes of the model's envelope
// (or engine task), nil when there is none (bare trees).
func envelopeAttributes(in *inputs) json.RawMessage {
	doc := in.Model
	if doc == nil {
		doc = in.GraphFile
	}
	for _, path := range []string{"Attributes", "model.Attributes"} {
		if r := gjson.GetBytes(doc.Data, path); r.Exists() && r.IsArray() {
			return json.RawMessage(r.Raw)
		}
	}
	return nil
}

// applyReport is the JSON report of apply (docs/apply.md).
type applyReport struct {
	FormatVersion string              `json:"format_version"`
	Target        string              `json:"target"`
	Unchanged     bool                `json:"unchanged"` // nothing to do: the target was not written
	Objects       []applyReportObject `json:"objects"`
	Notifications []applyReportNotify `json:"notifications"`
	// DestroyedWithoutHook lists the objects destroyed with no destroy
	// hook to run: nothing outside the model was cleaned up for them.
	DestroyedWithoutHook []string     `json:"destroyed_without_hook"`
	Summary              applySummary `json:"summary"`
}

type applyReportObject struct {
	ID        string  `json:"id"`
	Type      string  `json:"type"`
	Group     int     `json:"group"`
	State     string  `json:"state"`
	BlockedBy *string `json:"blocked_by,omitempty"`
	Error     string  `json:"error,omitempty"`
	// Forced: a destroy hook failed and --force counted the object
	// destroyed anyway; Error says what failed.
	Forced bool             `json:"forced,omitempty"`
	Hooks  []applyReportRun `json:"hooks"`
}

type applyReportRun struct {
	destroy.HookRun
	DurationMS int64 `json:"duration_ms"`
}

type applyReportNotify struct {
	Publisher  string          `json:"publisher"`
	Subscriber string          `json:"subscriber"`
	Handler    string          `json:"handler"`
	Hook       *applyReportRun `json:"hook"`
	Patch      json.RawMessage `json:"patch,omitempty"`
	Error      string          `json:"error,omitempty"`
}

type applySummary struct {
	Destroyed           int  `json:"destroyed"`
	Failed              int  `json:"failed"`
	Blocked             int  `json:"blocked"`
	Pending             int  `json:"pending"`
	Forced              int  `json:"forced"`
	WithoutHook         int  `json:"destroyed_without_hook"`
	NotificationsFailed int  `json:"notifications_failed"`
	Interrupted         bool `json:"interrupted"`
}

func newApplyReport(ai *applyInputs, p *destroy.Plan, r *destroy.ApplyResult) *applyReport {
	rep := &applyReport{FormatVersion: "1", Target: ai.target, Unchanged: ai.unchanged, Objects: []applyReportObject{}, Notifications: []applyReportNotify{}, DestroyedWithoutHook: []string{}}
	for _, g := range p.Groups {
		for _, i := range g.Objects {
			o, res := &p.Objects[i], &r.Objects[i]
			ro := applyReportObject{ID: o.ID, Type: o.Type, Group: o.Group, State: res.Outcome, Hooks: []applyReportRun{}}
			if res.BlockedBy >= 0 {
				id := p.Objects[res.BlockedBy].ID
				ro.BlockedBy = &id
			}
			if res.Err != nil {
				ro.Error = res.Err.Error()
			}
			for _, h := range res.Hooks {
				ro.Hooks = append(ro.Hooks, applyReportRun{HookRun: h, DurationMS: h.Duration.Milliseconds()})
			}
			if res.Outcome == destroy.OutcomeDestroyed {
				switch {
				case res.Err != nil:
					ro.Forced = true
					rep.Summary.Forced++
				case len(res.Hooks) == 0:
					rep.DestroyedWithoutHook = append(rep.DestroyedWithoutHook, o.ID)
				}
			}
			rep.Objects = append(rep.Objects, ro)
		}
	}
	for i, n := range p.Notifications {
		res := r.Notifications[i]
		rn := applyReportNotify{Publisher: p.Objects[n.Publisher].ID, Subscriber: n.Subscriber, Handler: n.Handler, Patch: res.Patch}
		if res.Hook != nil {
			rn.Hook = &applyReportRun{HookRun: *res.Hook, DurationMS: res.Hook.Duration.Milliseconds()}
		}
		if res.Err != nil {
			rn.Error = res.Err.Error()
			rep.Summary.NotificationsFailed++
		}
		rep.Notifications = append(rep.Notifications, rn)
	}
	rep.Summary.Destroyed = r.Count(destroy.OutcomeDestroyed)
	rep.Summary.Failed = r.Count(destroy.OutcomeFailed)
	rep.Summary.Blocked = r.Count(destroy.OutcomeBlocked)
	rep.Summary.Pending = r.Count(destroy.OutcomePending)
	rep.Summary.WithoutHook = len(rep.DestroyedWithoutHook)
	rep.Summary.Interrupted = r.Interrupted
	return rep
}

func writeApplyReport(streams *IO, opts applyOptions, ai *applyInputs, p *destroy.Plan, r *destroy.ApplyResult) error {
	rep := newApplyReport(ai, p, r)
	if opts.JUnit != "" {
		if err := writeJUnitFile(opts.JUnit, rep, opts.started); err != nil {
			return err
		}
	}
	if opts.Format == "json" {
		return writeJSON(streams.Out, rep)
	}
	pal := newPalette(streams, opts.NoColor)
	var b strings.Builder
	for _, o := range rep.Objects {
		switch o.State {
		case destroy.OutcomeDestroyed:
			if opts.Quiet && !o.Forced && len(o.Hooks) > 0 {
				break // all went well: nothing to say
			}
			hooks := pal.warn("no destroy hook")
			if n := len(o.Hooks); n > 0 {
				hooks = fmt.Sprintf("%d %s", n, plural(n, "hook", "hooks"))
				if k := resumedHooks(o.Hooks); k > 0 {
					hooks += fmt.Sprintf(", %d resumed", k)
				}
			}
			if o.Forced {
				fmt.Fprintf(&b, "%s %s %s (group %d, %s): %s\n", pal.bad("destroyed (forced)"), term(orDash(o.Type)), pal.id(term(o.ID)), o.Group, hooks, term(o.Error))
				writeStderrTails(&b, o.Hooks)
				break
			}
			fmt.Fprintf(&b, "destroyed %s %s (group %d, %s)\n", term(orDash(o.Type)), pal.id(term(o.ID)), o.Group, hooks)
			if opts.Verbose {
				writeHookRuns(&b, o.Hooks)
			}
		case destroy.OutcomeFailed:
			fmt.Fprintf(&b, "%s %s %s: %s\n", pal.bad("failed"), term(orDash(o.Type)), pal.id(term(o.ID)), term(o.Error))
			writeStderrTails(&b, o.Hooks)
		case destroy.OutcomeBlocked:
			fmt.Fprintf(&b, "%s %s %s: must come after failed %s\n", pal.warn("blocked"), term(orDash(o.Type)), pal.id(term(o.ID)), term(*o.BlockedBy))
		default:
			fmt.Fprintf(&b, "not reached %s %s\n", term(orDash(o.Type)), pal.id(term(o.ID)))
		}
	}
	for _, n := range rep.Notifications {
		if opts.Verbose && n.Error == "" {
			writeNotified(&b, n)
		}
		if n.Error != "" {
			fmt.Fprintf(&b, "%s notification %s of %s: %s\n", pal.warn("warning:"), term(n.Handler), term(n.Subscriber), term(n.Error))
		}
	}
	s := rep.Summary
	if opts.Quiet && !needsSaying(rep) {
		_, err := io.WriteString(streams.Out, b.String())
		return err
	}
	fmt.Fprintf(&b, "%d destroyed, %d failed, %d blocked", s.Destroyed, s.Failed, s.Blocked)
	if s.Pending > 0 {
		fmt.Fprintf(&b, ", %d not reached", s.Pending)
	}
	if s.Forced > 0 {
		fmt.Fprintf(&b, ", %d forced", s.Forced)
	}
	if s.WithoutHook > 0 {
		fmt.Fprintf(&b, ", %d destroyed without a hook", s.WithoutHook)
	}
	switch {
	case ai.unchanged:
		fmt.Fprintf(&b, "; nothing to do: %s left as it was\n", term(ai.target))
	case ai.target == "-":
		b.WriteString("; wrote standard output\n")
	default:
		fmt.Fprintf(&b, "; wrote %s\n", term(ai.target))
	}
	_, err := io.WriteString(streams.Out, b.String())
	return err
}

// writeStderrTails writes the last lines each hook wrote to stderr.
func writeStderrTails(b *strings.Builder, hooks []applyReportRun) {
	for _, h := range hooks {
		if h.StderrTail != "" {
			fmt.Fprintf(b, "    stderr of %s:\n", term(h.Hook))
			for _, line := range strings.Split(strings.TrimRight(h.StderrTail, "\n"), "\n") {
				fmt.Fprintf(b, "      %s\n", term(line))
			}
		}
	}
}

// resumedHooks counts the hooks an earlier, stopped run ran.
func resumedHooks(hooks []applyReportRun) int {
	n := 0
	for _, h := range hooks {
		if h.Resumed {
			n++
		}
	}
	return n
}
