package destroy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/destroy/planfile"
)

// The codes of a Refusal: stable, listed in docs/plan-format.md
// ("summary.refusals").
const (
	// RefuseDangling: the incoming model still references doomed
	// objects and on_dangling is "error" (*DanglingError).
	RefuseDangling = "dangling_references"
	// RefuseNoHookSource: objects are doomed, no hooks dir is given and
	// no cached package whose hooks run defines any of their classes,
	// and no_hooks was not said (*NoHookSourceError).
	RefuseNoHookSource = "no_hook_source"
	// RefuseHooksRequired: require_hooks, and doomed objects have no
	// destroy hook (*MissingHooksError).
	RefuseHooksRequired = "hooks_required"
	// RefuseHookCannotRun: a hook found cannot run: the kernel does not
	// let this user execute it (no execute permission, a file system
	// mounted noexec, a directory on the way it may not search), someone
	// other than the user or root could change it, it cannot be given
	// its arguments and environment, or it is a package's hook that
	// would run as the owner of another user's cache and that owner is
	// not in the user database (pkgcache.HookUserError)
	// (*HookCannotRunError, *HookWritersError, *HookArgsError).
	RefuseHookCannotRun = "hook_cannot_run"
)

// RefusalSettings are the settings a refusal depends on beyond the
// prepared plan itself: apply's --on-dangling=keep, --no-hooks and
// --require-hooks, as plan records them in a saved plan.
type RefusalSettings struct {
	OnDanglingKeep bool
	NoHooks        bool
	RequireHooks   bool
	// Plan is the saved plan's file, "" without one (the no hook source
	// message names it).
	Plan string
}

// HookCannotRunError refuses a run in which a hook found cannot run
// (hook.Found.Err: the kernel would not execute it for this user, or it
// could not be looked at): nothing was run or written. Problems holds
// each such hook once.
type HookCannotRunError struct {
	Problems []hook.Found
}

func (e *HookCannotRunError) Error() string {
	shown, more := e.Problems, ""
	if len(shown) > MaxDifferences {
		shown, more = shown[:MaxDifferences], fmt.Sprintf("; and %d more", len(e.Problems)-MaxDifferences)
	}
	msgs := make([]string, len(shown))
	for i, f := range shown {
		msgs[i] = fmt.Sprintf("%s hook %s: %s", f.Event, f.Path, hookErrText(f))
	}
	return fmt.Sprintf("%d %s cannot run: %s%s; no hook was run", len(e.Problems),
		map[bool]string{true: "hook", false: "hooks"}[len(e.Problems) == 1], strings.Join(msgs, "; "), more)
}

// hookProblems are the hooks of a prepared plan that apply refuses to
// run, found once by Prepare (each kind in the order PlanHooks.distinct
// or PlanHooks.each gives them).
type hookProblems struct {
	cannotRun []hook.Found      // Found.Err set
	writers   []error           // hook.CheckWriters
	args      []HookArgsProblem // HookArgs
}

// count returns how many hooks have a problem, each once (a hooks dir
// others can write is a problem of each hook in it, and is listed once).
func (hp *hookProblems) count() int {
	hooks := map[string]bool{}
	for _, f := range hp.cannotRun {
		hooks[f.Path] = true
	}
	for _, err := range hp.writers {
		if we, ok := err.(*hook.WritersError); ok {
			hooks[we.Hook] = true
		}
	}
	for _, pr := range hp.args {
		hooks[pr.Hook] = true
	}
	return len(hooks)
}

// Refusals lists every reason apply refuses to run the prepared plan
// with settings s, in the order apply reports them: dangling references
// (unless OnDanglingKeep), no hook source (unless NoHooks), doomed
// objects without a destroy hook (RequireHooks), hooks that cannot run.
// Empty (nil) when apply runs it. This is the one rule of "would apply
// refuse?": apply refuses the first, plan --detailed-exitcode exits 1
// when there is one, and the plan's summary lists them all
// (planfile.Summary.Refusals), which show prints.
func (prep *Prepared) Refusals(s RefusalSettings) []planfile.Refusal {
	p := prep.Plan
	var out []planfile.Refusal
	if n := len(p.Diff.Dangling); n > 0 && !s.OnDanglingKeep {
		out = append(out, planfile.Refusal{Code: RefuseDangling,
			Message: fmt.Sprintf("%d dangling %s to doomed objects (use --on-dangling=keep to destroy them and keep them flagged destroyed)", n, plural(n, "reference", "references")),
			Err:     &DanglingError{Refs: p.Diff.Dangling}})
	}
	if n := len(p.Objects); n > 0 && !s.NoHooks && !prep.hooksDirs && !prep.Hooks.packageSource() {
		out = append(out, planfile.Refusal{Code: RefuseNoHookSource,
			Message: fmt.Sprintf("no hook source: %d doomed %s and no hooks dir or cached package whose hooks run for any of their classes (give --hooks-dir DIR, or --no-hooks if dropping them from the model without hooks is meant)", n, plural(n, "object", "objects")),
			Err:     &NoHookSourceError{Doomed: n, Plan: s.Plan}})
	}
	if s.RequireHooks {
		if err := requireHooks(p, prep.Hooks); err != nil {
			n := len(err.Objects)
			out = append(out, planfile.Refusal{Code: RefuseHooksRequired,
				Message: fmt.Sprintf("--require-hooks: %d doomed %s no destroy hook", n, plural(n, "object has", "objects have")),
				Err:     err})
		}
	}
	if n := prep.problems.count(); n > 0 {
		var err error
		switch hp := &prep.problems; {
		case len(hp.writers) > 0:
			err = &HookWritersError{Problems: hp.writers}
		case len(hp.args) > 0:
			err = &HookArgsError{Problems: hp.args}
		default:
			err = &HookCannotRunError{Problems: hp.cannotRun}
		}
		out = append(out, planfile.Refusal{Code: RefuseHookCannotRun,
			Message: fmt.Sprintf("%d %s cannot run (see the hook_cannot_run %s)", n, plural(n, "hook", "hooks"), plural(n, "warning", "warnings")),
			Err:     err})
	}
	return out
}

// packageSource reports whether a cached package whose hooks run defines
// the class of a doomed object or an ancestor of it: a hook source even
// with no hooks dir.
func (h *PlanHooks) packageSource() bool {
	for _, k := range h.Types {
		if k.PackageHooks {
			return true
		}
	}
	return false
}

// requireHooks returns a *MissingHooksError naming the doomed objects of
// p that have no destroy hook, nil when every one has.
func requireHooks(p *order.Plan, hooks *PlanHooks) *MissingHooksError {
	var missing []*order.Planned
	for _, g := range p.Groups {
		for _, i := range g.Objects {
			if len(hooks.Of(int(i)).Destroy) == 0 {
				o := p.Object(int(i))
				missing = append(missing, &o)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &MissingHooksError{Objects: missing}
}

// RefusalCode returns the code of the refusal err is (or wraps), as
// Prepared.Refusals names it: Run's error when it refuses a plan
// (*DanglingError, *NoHookSourceError, *MissingHooksError,
// *HookCannotRunError, *HookWritersError, *HookArgsError). "" when err
// is no refusal.
func RefusalCode(err error) string {
	var (
		de *DanglingError
		ne *NoHookSourceError
		me *MissingHooksError
		ce *HookCannotRunError
		we *HookWritersError
		ae *HookArgsError
	)
	switch {
	case errors.As(err, &de):
		return RefuseDangling
	case errors.As(err, &ne):
		return RefuseNoHookSource
	case errors.As(err, &me):
		return RefuseHooksRequired
	case errors.As(err, &ce), errors.As(err, &we), errors.As(err, &ae):
		return RefuseHookCannotRun
	}
	return ""
}
