package destroy

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
	"strings"
	"time"

	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/destroy/journal"
	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/destroy/planfile"
	"github.com/objgc/objgc/destroy/writeback"
	"github.com/objgc/objgc/diff"
	"github.com/objgc/objgc/internal/atomicfile"
	"github.com/objgc/objgc/snapshot"
)

// ErrStalePlan is wrapped by the *StaleError of a saved plan that no
// longer holds.
var ErrStalePlan = errors.New("saved plan is stale")

// ErrInterrupted is wrapped by Run's error when the first interrupt
// (RunOptions.Drain) ended the wait for the lock: nothing was done.
var ErrInterrupted = errors.New("interrupted")

// MaxDifferences is how many differences a *StaleError or a
// *MissingHooksError names before it says how many more there are.
const MaxDifferences = 5

// StaleError is a saved plan whose inputs, hooks or packages changed
// since it was planned (errors.Is ErrStalePlan).
type StaleError struct {
	Plan  string   // the plan file
	Diffs []string // what changed, one a line, in lower case
}

func (e *StaleError) Error() string {
	shown, more := e.Diffs, ""
	if len(shown) > MaxDifferences {
		shown, more = shown[:MaxDifferences], fmt.Sprintf("; and %d more", len(e.Diffs)-MaxDifferences)
	}
	return fmt.Sprintf("plan %s is stale: %s%s; plan again", e.Plan, strings.Join(shown, "; "), more)
}

func (e *StaleError) Unwrap() error { return ErrStalePlan }

// InputChanged is the difference a *StaleError names for an input whose
// sha256 (lower-case hex) was planned and is now another.
func InputChanged(path, was, now string) string {
	return fmt.Sprintf("%s changed since it was planned (sha256 %s, now %s)", path, short(was), short(now))
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// DanglingError refuses a run (RunOptions.OnDanglingKeep unset) whose
// incoming model still references doomed objects: Murano's engine would
// refuse the model written back.
type DanglingError struct {
	Refs []diff.Dangling
}

func (e *DanglingError) Error() string {
	return fmt.Sprintf("%d dangling references to doomed objects", len(e.Refs))
}

// MissingHooksError refuses a run (RunOptions.RequireHooks) in which
// doomed objects have no destroy hook.
type MissingHooksError struct {
	Objects []*order.Planned // in destruction order
}

func (e *MissingHooksError) Error() string {
	return fmt.Sprintf("%d doomed objects have no destroy hook", len(e.Objects))
}

// NoHookSourceError refuses a run (RunOptions.NoHooks unset) with doomed
// objects and no hook source: no hooks dir, and no doomed object's class
// in a cached package.
type NoHookSourceError struct {
	Doomed int    // how many objects are doomed
	Plan   string // the saved plan's file, "" without one
}

func (e *NoHookSourceError) Error() string {
	return fmt.Sprintf("no hook source: %d doomed objects and no hooks dir or cached package for any of their classes", e.Doomed)
}

// RunOptions configure Run. The embedded ApplyOptions are passed to applyPlan;
// Run sets their Journal, Resume and DoomedFile.
type RunOptions struct {
	ApplyOptions

	// Model, or Snapshot and Graph, name the inputs (ReadInputs); "-"
	// reads Stdin. Read is the model file read already (to tell a saved
	// plan from a model before the lock), used when the file is unchanged.
	Model, Snapshot, Graph string
	Stdin                  io.Reader
	Read                   *snapshot.Document

	// Plan, when not nil, is the saved plan read from PlanPath: before
	// the lock, what it recorded is compared with what is there now
	// (PlanChanges, with Finder, which must look in the plan's hooks dirs
	// and package cache; PlanMismatch; Applied), once the lock is held
	// the inputs again if they changed meanwhile, and each hook's sha256
	// as it runs. Model, or Snapshot and Graph, are then the plan's
	// inputs.
	Plan     *planfile.File
	PlanPath string

	// File is the file beside which the lock (<File>.lock) and the
	// journal (<File>.journal) sit and which the write-back replaces
	// atomically; an existing regular file or one to create, symbolic
	// links resolved. Stdout, when not nil, gets the model instead (File
	// is then the model file, which is left alone).
	File   string
	Stdout io.Writer
	// InPlace: File is the model file itself, so that nothing to do
	// leaves it as it is (bytes and mtime).
	InPlace bool

	// LockTimeout is how long to wait for the lock; 0 fails at once.
	LockTimeout time.Duration
	// LockWaiting, when not nil, is called once when the lock is held by
	// another process and Run is about to wait for it: with the lock
	// file, its holder (as LockedError names it) and how long Run waits.
	LockWaiting func(lock, holder string, timeout time.Duration)
	// OnDanglingKeep destroys objects still referenced and keeps them
	// flagged destroyed; unset, such a model is refused (*DanglingError).
	OnDanglingKeep bool
	// RequireHooks refuses a run in which a doomed object has no destroy
	// hook (*MissingHooksError).
	RequireHooks bool
	// NoHooks says that dropping doomed objects from the model without
	// running hooks is meant. Unset, a run with doomed objects and no
	// hook source at all (Finder has no hooks dir, and no doomed object's
	// class is in a cached package) is refused with a *NoHookSourceError:
	// a forgotten hooks dir would otherwise drop every object from the
	// model and leave its resources in the cloud. The caller gives a
	// Finder that finds no hook with it.
	NoHooks bool

	// Approve, when not nil, is asked before the lock, once the inputs
	// were read and prepared and nothing refuses them, whether to go on
	// with a plan that has something to do (something doomed or
	// dropped); an error from it ends the run with that error, nothing
	// done. Inputs on standard input are prepared only after the lock:
	// Approve is not asked about them.
	Approve func(*Prepared) error

	// Prepared, when not nil, is called with each preparation of the
	// inputs, before Run checks it (and before the lock, for inputs
	// that are files): the plan apply runs, or refuses. What it keeps
	// of the plan must be copied: the inputs of a preparation that
	// changed while Run waited for the lock are closed.
	Prepared func(*Prepared)

	// Resumed, when not nil, is called once the journal is open, with
	// what it held from an earlier run.
	Resumed func(*journal.Resume)
	// HooksDone, when not nil, is called once no hook runs any more,
	// before the model is written (a progress line is erased then).
	HooksDone func()
}

// Report is what Run did.
type Report struct {
	Inputs *Inputs
	Plan   *order.Plan
	Result *ApplyResult
	// Unchanged: nothing was to be done and File, being the model
	// itself, was not written.
	Unchanged bool
	// Applied: the saved plan was applied already (Applied): nothing was
	// done, nothing written, no lock taken; Unchanged is set too.
	Applied bool
	// Warnings are about what the run could not see: a package that
	// doomed objects' types name and the package cache does not hold
	// (PackageWarnings). Never nil.
	Warnings []order.Warning
}

// Run carries out one apply (docs/apply.md, docs/journal.md), in this
// order:
//
//  0. before the lock, unless an input is standard input: reads and
//     plans the inputs and refuses what step 3 refuses (refusePlan), so
//     that a refusal makes no lock file; for a saved plan (Plan), also
//     refuses it (*StaleError) when an input, a hook or a package
//     changed since it was planned (PlanChanges) or the plan lists other
//     work than the inputs give (PlanMismatch), and returns at once,
//     nothing done (Report.Applied), when the inputs changed because it
//     was applied already (Applied);
//  1. takes the lock on File (lockTarget), waiting up to LockTimeout; the
//     first interrupt (Drain) ends the wait; refuses a File with more
//     than one hard link (CheckLinks: the lock is per name);
//  2. reads the inputs (ReadInputs): when read in 0, only when they
//     changed while it waited (Inputs.Unchanged), a saved plan's then
//     checked as in 0;
//  3. prepares the plan as objgc plan does (Prepare: the comparison, the
//     order, the hooks and the package warnings) and refuses dangling
//     references unless OnDanglingKeep, doomed objects without any hook source unless
//     NoHooks (checked before step 1 too, on the inputs as they are
//     then: see NoHooks), objects without a destroy hook under
//     RequireHooks, hooks that someone other than the user or root
//     could change (hook.CheckWriters), and hooks that cannot be given
//     their arguments and environment (HookArgs: an id, type or handler
//     name too long for execve);
//  4. with nothing to do (nothing doomed, nothing dropped) and no journal
//     to resume, writes the model (not when InPlace: File is left as it
//     is) and returns;
//  5. opens the journal (journal.Open), resuming an earlier run on the same
//     inputs, and writes the doomed-ids file (OBJGC_DOOMED);
//  6. runs the notifications and destroys (applyPlan) with RunHook;
//  7. decides the write-back (writeback.Build), streams it to File
//     atomically (or to Stdout), records the commit in the journal and
//     removes the journal.
//
// Inputs: the input paths (Model, or Snapshot and Graph) or a saved Plan
// naming them, File (checked by the caller: a regular file or none, in a
// writable folder), and Finder, which Run and applyPlan share (for a saved
// plan it must look where the plan looked). The caller checks flags and
// outputs; Run checks everything the protocol needs.
//
// The lock is released when Run returns. Hook failures, blocked objects
// and an interrupt during the hooks are in Report.Result, not errors.
// Errors: ErrLocked (*LockedError) when the lock is held; ErrInterrupted
// when the lock wait was interrupted; ErrStalePlan (*StaleError) when an
// input, a hook or a package differs from the saved plan, or the plan
// lists other work than its inputs give;
// *DanglingError; *NoHookSourceError; *MissingHooksError;
// *HardLinksError; *HookWritersError; *HookArgsError;
// reading errors of the inputs
// (*snapshot.SyntaxError, *snapshot.ModelError, ...); journal errors
// (one that cannot be replayed, journal.ErrOtherInputs); a lock or
// journal path that is not a regular file (lockfile.ErrNotRegular); an
// "apply stopped" error when the hooks could not go on (the journal
// stays, for the next run to resume); write-back and writing errors. When Run fails the model
// is not written, unless the failure is the write's own.
func Run(ctx context.Context, opts RunOptions) (_ *Report, err error) {
	var (
		in      *Inputs
		prep    *Prepared
		applied bool
	)
	// The inputs stay mapped until the caller is done with the report
	// (Report.Inputs.Close), which reads the model too; after an error,
	// until the process ends: the error may hold strings of them (the
	// types of objects without hooks, say).
	//
	// A mapped input truncated under the run is an error naming it, not
	// a crash (the write-back and the hooks' documents read its bytes).
	defer snapshot.Protect(&err, func() []*snapshot.Document { return in.Docs() })()
	// The inputs are read and planned before the lock file is made, so
	// that a refusal (a stale plan, dangling references, no hook source,
	// hooks that cannot run) touches nothing; once the lock is held they
	// are read and planned again only if they changed while apply waited
	// for it. An input on standard input can be read only once: after the
	// lock.
	if in, prep, applied, err = prepareBeforeLock(ctx, opts); err != nil {
		return nil, err
	}
	if applied {
		return appliedReport(in, prep.Plan), nil
	}
	if prep != nil {
		if opts.Prepared != nil {
			opts.Prepared(prep)
		}
		if err := refusePlan(prep, opts); err != nil {
			return nil, err
		}
		if p := prep.Plan; opts.Approve != nil && (len(p.Objects) > 0 || len(p.Diff.Dropped) > 0) {
			if err := opts.Approve(prep); err != nil {
				return nil, err
			}
		}
	}
	unlock, err := lockRun(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer unlock()

	if in, prep, applied, err = prepareAfterLock(ctx, opts, in, prep); err != nil {
		return nil, err
	}
	if applied {
		return appliedReport(in, prep.Plan), nil
	}
	if opts.Prepared != nil {
		opts.Prepared(prep)
	}
	p := prep.Plan
	rep := &Report{Inputs: in, Plan: p, Warnings: []order.Warning{}}
	rep.Warnings = append(rep.Warnings, prep.PackageWarnings...)
	if opts.OnDanglingKeep {
		rep.Warnings = append(rep.Warnings, KeepWarnings(p)...)
	}
	// Again on what runs: the inputs may have changed during the wait.
	if err := refusePlan(prep, opts); err != nil {
		return nil, err
	}

	// Nothing to do (nothing doomed, nothing dropped: no hook, no patch)
	// needs no journal, unless one is there to resume or refuse.
	if len(p.Objects) == 0 && len(p.Diff.Dropped) == 0 {
		if _, err := os.Lstat(journal.PathFor(opts.File)); errors.Is(err, fs.ErrNotExist) {
			rep.Result = &ApplyResult{}
			if opts.InPlace {
				rep.Unchanged = true
				return rep, nil
			}
			if err := writeUnchanged(opts, in, p); err != nil {
				return nil, err
			}
			return rep, nil
		}
	}
	if err := execute(ctx, opts, in, p, prep.Hooks, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// Verdict is what apply of a plan would do now, as Check finds it.
type Verdict struct {
	// Applied: the saved plan was applied already; apply would say so
	// and exit 0, doing nothing.
	Applied bool
	// Refusals: why apply would refuse to run (Prepared.Refusals);
	// empty when it would run.
	Refusals []planfile.Refusal
	// Read: the inputs were read (not when one is standard input,
	// which apply reads only after the lock); Destroy and Dropped then
	// count what apply would destroy and drop.
	Read             bool
	Destroy, Dropped int
}

// Check is apply's own check before the lock (Run, step 0), without
// taking the lock or touching anything: it reads and prepares the inputs
// (a saved plan's compared with it: a *StaleError when it no longer
// holds) and returns whether the saved plan was applied already, or why
// apply would refuse it. Errors are Run's before its lock: reading
// errors of the inputs, ErrStalePlan. Inputs on standard input are not
// read (Verdict.Plan nil).
func Check(ctx context.Context, opts RunOptions) (*Verdict, error) {
	in, prep, applied, err := prepareBeforeLock(ctx, opts)
	if in != nil {
		defer in.Close()
	}
	if err != nil {
		return nil, err
	}
	v := &Verdict{Applied: applied}
	if prep != nil {
		v.Read, v.Destroy, v.Dropped = true, len(prep.Plan.Objects), len(prep.Plan.Diff.Dropped)
		if !applied {
			v.Refusals = prep.Refusals(opts.RefusalSettings())
		}
	}
	return v, nil
}

// prepareBeforeLock reads and prepares the inputs before the lock is
// taken, so that a refusal touches nothing: a saved plan's checked
// against it (readSavedPlan; applied when it was carried out already).
// Inputs on standard input can be read only once: they are left for
// after the lock (in and prep nil).
func prepareBeforeLock(ctx context.Context, opts RunOptions) (in *Inputs, prep *Prepared, applied bool, err error) {
	switch {
	case opts.Plan != nil:
		return readSavedPlan(ctx, opts, hookChanges(ctx, opts.Plan, opts.Finder))
	case opts.Model != "-" && opts.Snapshot != "-" && opts.Graph != "-":
		if in, err = ReadInputs(nil, opts.Model, opts.Snapshot, opts.Graph, opts.Read, true); err != nil {
			return nil, nil, false, err
		}
		if prep, err = prepare(ctx, in, opts); err != nil {
			return in, nil, false, err // read: Run's deferred check names a fault in them
		}
	}
	return in, prep, false, nil
}

// prepareAfterLock returns what runs once the lock is held: the inputs
// in and their preparation prep, read before the lock, unless they
// changed while apply waited for it; else the inputs read and prepared
// now.
func prepareAfterLock(ctx context.Context, opts RunOptions, in *Inputs, prep *Prepared) (_ *Inputs, _ *Prepared, applied bool, err error) {
	switch {
	case in == nil:
		if in, err = ReadInputs(opts.Stdin, opts.Model, opts.Snapshot, opts.Graph, opts.Read, true); err != nil {
			return nil, nil, false, err
		}
		if prep, err = prepare(ctx, in, opts); err != nil {
			return in, nil, false, err // read: Run's deferred check names a fault in them
		}
	case opts.Plan == nil && !in.Unchanged():
		// Changed while apply waited for the lock: what runs is what is
		// there now.
		in.Close()
		in = nil
		if in, err = ReadInputs(nil, opts.Model, opts.Snapshot, opts.Graph, nil, true); err != nil {
			return nil, nil, false, err
		}
		if prep, err = prepare(ctx, in, opts); err != nil {
			return in, nil, false, err // read: Run's deferred check names a fault in them
		}
	case opts.Plan != nil && !in.Unchanged():
		// Changed while apply waited for the lock: by another apply of
		// this plan (it was applied), or by anything else (stale). The
		// hooks were compared before the lock; each is checked again as
		// it runs.
		in.Close()
		in = nil
		if in, prep, applied, err = readSavedPlan(ctx, opts, nil); err != nil {
			return nil, nil, false, err
		}
	}
	return in, prep, applied, nil
}

// lockRun takes the lock on opts.File (lockTarget), waiting up to
// opts.LockTimeout. A Drain closed before or during the wait ends the run
// with ErrInterrupted, nothing done. Once the lock is held the target's
// hard links are checked again.
func lockRun(ctx context.Context, opts RunOptions) (unlock func(), err error) {
	// An interrupt already there (a signal while the command line was
	// parsed) ends the run before the lock: nothing to drain, no file
	// to touch.
	if opts.Drain != nil {
		select {
		case <-opts.Drain:
			return nil, fmt.Errorf("%w before the lock was taken; nothing was done", ErrInterrupted)
		default:
		}
	}
	lockCtx, cancelLock := context.WithCancel(ctx)
	if opts.Drain != nil {
		go func() {
			select {
			case <-opts.Drain:
				cancelLock()
			case <-lockCtx.Done():
			}
		}()
	}
	var waiting func(string)
	if opts.LockWaiting != nil {
		waiting = func(holder string) { opts.LockWaiting(LockPath(opts.File), holder, opts.LockTimeout) }
	}
	unlock, err = lockTarget(lockCtx, opts.File, opts.LockTimeout, waiting)
	cancelLock()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, fmt.Errorf("%w while %w; nothing was done", ErrInterrupted, err)
		}
		return nil, err
	}
	// Checked by the caller before the lock too; a link made while this
	// run waited for the lock is found here, before anything is done.
	if err := CheckLinks(opts.File); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// writeUnchanged writes the model back when the plan has nothing to do:
// no journal, no hook, the write-back of no outcome.
func writeUnchanged(opts RunOptions, in *Inputs, p *order.Plan) error {
	written, err := writeback.Build(p, writeback.Effects{}, envelopeAttributes(in), opts.OnDanglingKeep)
	if err != nil {
		return err
	}
	write := func(w io.Writer) error { return writeModel(w, in, written) }
	if opts.Stdout != nil {
		_, err = writeStdout(opts.Stdout, write)
	} else {
		err = atomicfile.Write(opts.File, 0o644, write)
	}
	return err
}

// execute carries out plan p under the lock: it opens (or resumes) the
// journal, writes the doomed-ids file, runs the hooks (applyPlan), then
// writes the model back and commits it (commit). rep gets the result and
// the revival warnings.
func execute(ctx context.Context, opts RunOptions, in *Inputs, p *order.Plan, hooks *PlanHooks, rep *Report) error {
	var journalInputs []journal.Input
	for _, d := range in.Docs() {
		journalInputs = append(journalInputs, journal.Input{Path: d.Name, SHA256: d.SHA256()})
	}
	jnl, resume, err := journal.Open(journal.PathFor(opts.File), journalInputs)
	if err != nil {
		return err
	}
	defer jnl.Close()
	if opts.Resumed != nil {
		opts.Resumed(resume)
	}
	doomedFile, err := writeDoomedFile(p, nil)
	if err != nil {
		return err
	}
	defer os.Remove(doomedFile)
	// Hooks that run as another user read a copy of their own.
	doomedFiles := map[int]string{}
	var userErr error
	distinct := func(fn func(hook.Found)) {
		if hooks != nil {
			hooks.distinct(fn)
		}
	}
	distinct(func(f hook.Found) {
		u := f.Source.User
		if u == nil || userErr != nil {
			return
		}
		if _, ok := doomedFiles[u.UID]; ok {
			return
		}
		var name string
		if name, userErr = writeDoomedFile(p, u); userErr == nil {
			doomedFiles[u.UID] = name
		}
	})
	for _, name := range doomedFiles {
		defer os.Remove(name)
	}
	if userErr != nil {
		return userErr
	}

	ao := opts.ApplyOptions
	ao.Journal, ao.Resume, ao.DoomedFile, ao.DoomedFiles = jnl, resume, doomedFile, doomedFiles
	// The hooks checked (refusePlan) are the hooks run: the
	// preparation's, not a second lookup.
	ao.Hooks = hooks
	ao.HookSHA256 = planHookSums(opts.Plan)
	if opts.Plan == nil {
		ao.HookSHA256 = foundHookSums(hooks)
	}
	if opts.Finder != nil && opts.Finder.Packages != nil {
		ao.RecordedSHA256 = opts.Finder.Packages.RecordedSHA256
	}
	result, err := applyPlan(ctx, p, ao)
	if opts.HooksDone != nil {
		opts.HooksDone()
	}
	if err != nil {
		return fmt.Errorf("apply stopped: %w; nothing was written, the journal %s keeps what was done", err, jnl.Path())
	}
	rep.Result = result
	rep.Warnings = append(rep.Warnings, result.RevivalWarnings(p)...)
	return commit(opts, jnl, in, p, result)
}

// commit writes the model back after the hooks (writeback.Build of their
// outcome) and records it in the journal: a committing record before the
// rename over the target (none for standard output), the commit record
// after, then the journal goes (docs/journal.md).
func commit(opts RunOptions, jnl *journal.Journal, in *Inputs, p *order.Plan, result *ApplyResult) error {
	outcome := writeback.Effects{Destroyed: result.Destroyed(), Patches: result.Patches(p)}
	written, err := writeback.Build(p, outcome, envelopeAttributes(in), opts.OnDanglingKeep)
	if err != nil {
		return err
	}
	write := func(w io.Writer) error { return writeModel(w, in, written) }
	var outputs []journal.Input
	if opts.Stdout != nil {
		// No rename to record: the commit record follows the last byte.
		sum, err := writeStdout(opts.Stdout, write)
		if err != nil {
			return err
		}
		outputs = []journal.Input{{Path: "-", SHA256: sum}}
	} else {
		target, err := filepath.Abs(opts.File)
		if err != nil {
			return err
		}
		err = atomicfile.WriteCommitted(opts.File, 0o644, write, func(sum string) error {
			outputs = []journal.Input{{Path: target, SHA256: sum}}
			return jnl.Committing(outputs)
		})
		if err != nil {
			return err
		}
	}
	if err := jnl.Commit(outputs); err != nil {
		return err
	}
	return jnl.Remove()
}

// refusePlan refuses a plan apply does not run: the first of
// Prepared.Refusals, with the run's settings.
func refusePlan(prep *Prepared, opts RunOptions) error {
	if r := prep.Refusals(opts.RefusalSettings()); len(r) > 0 {
		return r[0].Err
	}
	return nil
}

// RefusalSettings are the settings of opts that Prepared.Refusals reads.
func (opts *RunOptions) RefusalSettings() RefusalSettings {
	return RefusalSettings{OnDanglingKeep: opts.OnDanglingKeep, NoHooks: opts.NoHooks, RequireHooks: opts.RequireHooks, Plan: opts.PlanPath}
}

// writeDoomedFile writes every doomed id, one a line, for OBJGC_DOOMED (a
// hook's isDoomed). The list is unambiguous by construction: the reader
// refuses ids holding a control character, LF and CR included, so that
// grep -qxF matches exactly one id (docs/hooks.md). The file is mode
// 0600; for u not nil it is given to u (fchown, before anything is
// written), for the hooks that run as u.
func writeDoomedFile(p *order.Plan, u *hook.User) (string, error) {
	f, err := os.CreateTemp("", "objgc-doomed-*.txt")
	if err != nil {
		return "", fmt.Errorf("writing the doomed list: %w", err)
	}
	if u != nil {
		if err := f.Chown(u.UID, u.GID); err != nil {
			f.Close()
			os.Remove(f.Name())
			return "", fmt.Errorf("writing the doomed list for %s: %w", u, err)
		}
	}
	var b bytes.Buffer
	for i := range p.Objects {
		b.WriteString(p.ID(i))
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

// writeStdout writes the model to w (--write -) and returns the sha256 of
// what it wrote.
func writeStdout(w io.Writer, write func(io.Writer) error) (string, error) {
	sum := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(w, sum), 1<<20)
	if err := write(bw); err != nil {
		return "", fmt.Errorf("writing the model to standard output: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return "", fmt.Errorf("writing the model to standard output: %w", err)
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}

// writeModel writes the model written back (writeEnvelope), then fails
// when a mapped input changed while it was read (Inputs.CheckMapped): what
// was written was made from the bytes the plan read, and the caller then
// commits nothing.
func writeModel(w io.Writer, in *Inputs, m *writeback.Model) error {
	if err := writeEnvelope(w, in, m); err != nil {
		return err
	}
	return in.CheckMapped()
}

// writeEnvelope writes the envelope m, or, when the model file is an
// engine task ({"model": envelope, ...}), the task with the envelope in
// place of its model and every other byte as it was (docs/writeback.md).
// Where the envelope sits is what the reader recorded (snapshot.Envelope):
// the document is not parsed again.
func writeEnvelope(w io.Writer, in *Inputs, m *writeback.Model) error {
	if env := in.Incoming.Envelope; in.Model != nil && env != nil && env.Task {
		data := in.Model.Data
		lineStart := bytes.LastIndexByte(data[:env.Start], '\n') + 1
		line := data[lineStart:env.Start]
		indent := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		if _, err := w.Write(data[:env.Start]); err != nil {
			return err
		}
		if _, err := m.WriteNested(w, string(indent)); err != nil {
			return err
		}
		_, err := w.Write(data[env.End:])
		return err
	}
	_, err := m.WriteTo(w)
	return err
}

// envelopeAttributes returns the raw Attributes of the model's envelope
// (or engine task), nil when there is none (bare trees) or it is null:
// the reader refuses every other value that is not an array.
func envelopeAttributes(in *Inputs) json.RawMessage {
	env := in.Incoming.Envelope
	if env == nil || env.Attributes == nil {
		return nil
	}
	raw := in.Incoming.Doc.Data[env.Attributes.Start:env.Attributes.End]
	if len(raw) == 0 || raw[0] != '[' {
		return nil
	}
	return json.RawMessage(raw)
}

// prepare is Prepare of in with Run's finder and the hooks'
// environment. The second interrupt does not cut it short: the first,
// which ends a run before the lock, is looked at right after it; the
// second is for the hooks that run.
func prepare(ctx context.Context, in *Inputs, opts RunOptions) (*Prepared, error) {
	return Prepare(context.WithoutCancel(ctx), in.Snapshot, in.Incoming, PrepareOptions{Finder: opts.Finder, Env: opts.Env})
}

// readSavedPlan reads the inputs of the saved plan opts.Plan and checks
// them against it: it returns the inputs and their plan when the plan
// holds; applied when the inputs changed because the plan was carried
// out already (Applied); otherwise a *StaleError naming the inputs that
// changed, hookDiffs (PlanChanges' comparison of the hooks), and how the
// plan of the inputs differs from what the saved plan lists
// (PlanMismatch). An input gone, or one that no longer reads as a model,
// is a change too.
func readSavedPlan(ctx context.Context, opts RunOptions, hookDiffs []string) (in *Inputs, prep *Prepared, applied bool, err error) {
	sp := opts.Plan
	stale := func(diffs []string) (*Inputs, *Prepared, bool, error) {
		if in != nil {
			in.Close()
		}
		return nil, nil, false, &StaleError{Plan: opts.PlanPath, Diffs: diffs}
	}
	if in, err = ReadInputs(nil, opts.Model, opts.Snapshot, opts.Graph, nil, true); err != nil {
		if diffs := inputChanges(sp); len(diffs) > 0 {
			return stale(append(diffs, hookDiffs...))
		}
		return nil, nil, false, err
	}
	var diffs []string
	for k, d := range in.Docs() {
		if d.SHA256() != sp.Inputs[k].SHA256 {
			diffs = append(diffs, InputChanged(d.Name, sp.Inputs[k].SHA256, d.SHA256()))
		}
	}
	if prep, err = prepare(ctx, in, opts); err != nil {
		in.Close()
		return nil, nil, false, err
	}
	p := prep.Plan
	if len(diffs) > 0 {
		left, applied := Applied(sp, in, p)
		if applied {
			return in, prep, true, nil
		}
		if total := planObjects(sp); len(left) > 0 && len(left) < total {
			shown, more := left, ""
			if len(shown) > MaxDifferences {
				shown, more = shown[:MaxDifferences], fmt.Sprintf(" and %d more", len(left)-MaxDifferences)
			}
			diffs = append(diffs, fmt.Sprintf("%d of its %d objects are gone or flagged destroyed and %d are not (%s%s): an apply of this plan did not finish, or the model was edited",
				total-len(left), total, len(left), strings.Join(shown, ", "), more))
		}
		return stale(append(diffs, hookDiffs...))
	}
	if len(hookDiffs) > 0 {
		return stale(hookDiffs)
	}
	if diffs := PlanMismatch(sp, p); len(diffs) > 0 {
		return stale(diffs)
	}
	return in, prep, false, nil
}

// planObjects counts the objects a saved plan lists.
func planObjects(sp *planfile.File) int {
	n := 0
	for _, g := range sp.Groups {
		n += len(g.Objects)
	}
	return n
}

// appliedReport is Run's report of a saved plan applied already.
func appliedReport(in *Inputs, p *order.Plan) *Report {
	return &Report{Inputs: in, Plan: p, Result: &ApplyResult{}, Unchanged: true, Applied: true, Warnings: []order.Warning{}}
}

// planHookSums returns the sha256 of every hook the saved plan sp lists,
// by path: what each must still be when it runs.
func planHookSums(sp *planfile.File) map[string]string {
	if sp == nil {
		return nil
	}
	sums := map[string]string{}
	for _, g := range sp.Groups {
		for _, o := range g.Objects {
			for _, h := range o.Hooks {
				sums[h.Path] = h.SHA256
			}
		}
	}
	for _, n := range sp.Notifications {
		if n.Hook != nil {
			sums[n.Hook.Path] = n.Hook.SHA256
		}
	}
	return sums
}

// foundHookSums returns the sha256 of every hook p would run, by path,
// hashed now (each file once): a run without a saved plan runs its hooks
// as they were when it planned, and a hook changed while it ran an
// earlier group fails rather than runs.
func foundHookSums(hooks *PlanHooks) map[string]string {
	sums := map[string]string{}
	hs := NewHookSums()
	hooks.distinct(func(f hook.Found) { sums[f.Path] = hs.Hook(f).SHA256 })
	return sums
}
