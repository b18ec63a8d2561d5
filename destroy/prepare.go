package destroy

import (
	"context"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/diff"
	"github.com/objgc/objgc/snapshot"
)

// Prepared is the one preparation objgc plan and objgc apply share: the
// plan of two models (the comparison and the order), the hooks it would
// run and the warnings about them and about the package cache. plan
// prints it; apply refuses it (Refusals) or runs it, so that what plan
// shows is what apply does.
type Prepared struct {
	Plan  *order.Plan
	Hooks *PlanHooks
	// HookWarnings are the hooks that apply refuses to run
	// (PlanHooks.warnings), empty when the finder had nowhere to look.
	HookWarnings []order.Warning
	// problems are those hooks, for Refusals.
	problems hookProblems
	// hooksDirs: the finder had hooks dirs to look in (a hook source,
	// Refusals).
	hooksDirs bool
	// PackageWarnings are the packages the doomed objects' types name
	// that the package cache does not hold (PackageWarnings).
	PackageWarnings []order.Warning
}

// PrepareOptions say where Prepare looks for hooks.
type PrepareOptions struct {
	Finder *HookFinder // nil: no hooks
	Env    []string    // the environment hooks are given (HookArgs)
	// Stage, when set, is called before each step ("compare", "order",
	// "hooks"); an error from it ends Prepare with that error.
	Stage func(name string) error
}

// Prepare compares snap with the incoming tree in (diff), orders the
// destruction of what is doomed (order), finds the plan's hooks
// (findHooks) and the warnings about them and the package cache. When ctx
// is done it stops within a few thousand objects and returns ctx.Err().
func Prepare(ctx context.Context, snap, in *snapshot.Tree, opts PrepareOptions) (*Prepared, error) {
	stage := func(name string) error {
		if opts.Stage == nil {
			return nil
		}
		return opts.Stage(name)
	}
	if err := stage("compare"); err != nil {
		return nil, err
	}
	d, err := diff.CompareContext(ctx, snap, in)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err // a fault reading a mapped model: names the file
	}
	if err := stage("order"); err != nil {
		return nil, err
	}
	p, err := order.NewPlanContext(ctx, d)
	if err != nil {
		return nil, err
	}
	if err := stage("hooks"); err != nil {
		return nil, err
	}
	prep := &Prepared{Plan: p, Hooks: findHooks(ctx, p, opts.Finder)}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if f := opts.Finder; f != nil && (len(f.Dirs) > 0 || f.Packages != nil) {
		prep.HookWarnings, prep.problems = prep.Hooks.warnings(p, opts.Env)
		prep.hooksDirs = len(f.Dirs) > 0
	}
	prep.PackageWarnings = PackageWarnings(ctx, p, opts.Finder)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return prep, nil
}
