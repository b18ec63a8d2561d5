package destroy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/destroy/journal"
	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/destroy/writeback"
	"github.com/objgc/objgc/internal/termsafe"
	"github.com/objgc/objgc/snapshot"
)

// ApplyOptions configure applyPlan.
type ApplyOptions struct {
	Finder *HookFinder
	// Hooks, when not nil, are the hooks the preparation of the plan
	// found (Prepared.Hooks), which Run checked: applyPlan runs exactly
	// those, without looking anything up again. Nil: Finder looks them
	// up.
	Hooks       *PlanHooks
	Parallelism int           // objects of one group at a time; < 1 means 1
	HookTimeout time.Duration // per hook; 0 means hook.DefaultTimeout
	Grace       time.Duration // SIGTERM to SIGKILL; 0 means hook.DefaultGrace
	FailFast    bool          // start nothing new after the first failed destroy
	Force       bool          // mark objects whose destroy hooks failed destroyed anyway
	Env         []string      // objgc's own environment, passed on to hooks
	DoomedFile  string        // OBJGC_DOOMED: a file listing every doomed id
	// DoomedFiles holds, by uid, the OBJGC_DOOMED of hooks that run as
	// another user (hook.User): a copy of DoomedFile that user owns, since
	// DoomedFile is objgc's user's alone (mode 0600).
	DoomedFiles map[int]string
	// Stderr receives each line hooks write to stderr, prefixed with the
	// object id and the event.
	Stderr func(line string)
	// Drain, once closed, stops starting hooks; running hooks finish (the
	// first SIGINT or SIGTERM). Cancelling ctx kills running hooks' process
	// groups (the second).
	Drain <-chan struct{}
	// Journal records every state change and hook run; Resume is what it
	// held from an earlier run on the same inputs. Both required.
	Journal *journal.Journal
	Resume  *journal.Resume
	// Progress, when not nil, is called once at the start, after each
	// notification and each object's end (destroyed, failed or blocked)
	// and when a group begins,
	// one call at a time, from the goroutine that made the step.
	Progress func(Progress)
	// HookSHA256 holds, by hook path, the sha256 each hook must have when
	// it runs (hook.Invocation.SHA256): the saved plan's, or what Run
	// found when it planned. A hook not in it is not checked.
	HookSHA256 map[string]string
	// RecordedSHA256, when set, gives the sha256 recorded for a hook of a
	// package objgc added (pkgcache.Session.RecordedSHA256): such a hook
	// must have it when it runs, whatever was planned, or it fails
	// (hook.ErrChanged) without running.
	RecordedSHA256 func(path string) (string, bool)
	// RunHook runs one hook; nil means hook.Run. Tests replace it to run
	// the protocol without processes. A *hook.HookError is a failed hook
	// (recorded, the run goes on); any other error stops the run.
	RunHook HookRunner
}

// HookRunner runs one hook invocation, as hook.Run does: a nil error and
// a result with the hook's exit status and patch, a *hook.HookError (with
// a result when the hook ran) when the hook failed, or another error when
// the run cannot go on.
type HookRunner func(ctx context.Context, inv hook.Invocation) (*hook.Result, error)

// Progress is how far a run has come, for a progress line.
type Progress struct {
	Notifications, NotificationsDone int
	// ObjectsDone counts objects destroyed, failed or blocked; Failed
	// those failed.
	Objects, ObjectsDone, Failed int
	// Group is the index of the group being destroyed (Group.Index, the
	// number the plan, the report and OBJGC_GROUP give it); 0 while the
	// notifications run. Step is its place in destruction order, from 1
	// to Groups: indexes run down, so Step alone would name another group.
	Group, Step, Groups int
}

// Outcome is what became of a doomed object in an apply run. The codes
// are stable: the JSON report and JUnit output carry them.
type Outcome string

// Outcome codes of an object after applyPlan.
const (
	OutcomeDestroyed Outcome = "destroyed" // every destroy hook succeeded, or --force
	OutcomeFailed    Outcome = "failed"    // a destroy hook failed
	OutcomeBlocked   Outcome = "blocked"   // must come after a failed object
	OutcomePending   Outcome = "pending"   // not reached: interrupted or --fail-fast
)

// HookRun is one hook run (or one recorded in the journal by an earlier
// run and not run again). Its JSON names are those of a hook in a plan
// (docs/json.md): "path" is the hook file, "event" is destroy or notify
// (a notify hook's handler is the notification's).
type HookRun struct {
	Hook       string        `json:"path"`
	Class      string        `json:"class"`
	Event      string        `json:"event"`
	Resumed    bool          `json:"resumed,omitempty"` // done by an earlier run, not run again
	ExitCode   int           `json:"exit_code"`
	Duration   time.Duration `json:"-"`
	Error      string        `json:"error,omitempty"`
	StderrTail string        `json:"stderr_tail,omitempty"`
}

// ObjectResult is what applyPlan did with one doomed object.
type ObjectResult struct {
	Outcome Outcome
	// BlockedBy is the failed object (index into Plan.Objects) that
	// blocks this one, -1 when not blocked.
	BlockedBy int
	Err       error // the failure, for failed objects
	Hooks     []HookRun
}

// NotifyResult is what applyPlan did with one notification.
type NotifyResult struct {
	Hook  *HookRun        // nil: no handler hook exists
	Patch json.RawMessage // the hook's patch, nil when none
	Err   error           // the notification failed
	// Revives are the doomed objects (indexes into Plan.Objects) whose id
	// the patch sets as a value: the write-back keeps them in the model,
	// flagged destroyed. Allowed, and warned about (RevivalWarnings).
	Revives []int
}

// ApplyResult is the outcome of applyPlan.
type ApplyResult struct {
	Objects       []ObjectResult // by index into Plan.Objects
	Notifications []NotifyResult // by index into Plan.Notifications
	Interrupted   bool           // Drain was closed or ctx cancelled
}

// Destroyed reports, per plan object, whether it is destroyed (for
// writeback.Build).
func (r *ApplyResult) Destroyed() []bool {
	out := make([]bool, len(r.Objects))
	for i, o := range r.Objects {
		out[i] = o.Outcome == OutcomeDestroyed
	}
	return out
}

// Count returns how many objects have outcome.
func (r *ApplyResult) Count(outcome Outcome) int {
	n := 0
	for _, o := range r.Objects {
		if o.Outcome == outcome {
			n++
		}
	}
	return n
}

// FailedNotifications counts the notifications that failed: their hook
// failed, printed a patch that was refused, or could not run.
func (r *ApplyResult) FailedNotifications() int {
	n := 0
	for _, nr := range r.Notifications {
		if nr.Err != nil {
			n++
		}
	}
	return n
}

// RevivalWarnings returns a WarnPatchRevivesDoomed warning for each
// doomed object a notification's patch re-references (NotifyResult.Revives),
// naming the subscriber, the handler and the doomed id, in notification
// order.
func (r *ApplyResult) RevivalWarnings(p *order.Plan) []order.Warning {
	var out []order.Warning
	for k, nr := range r.Notifications {
		n := p.Notifications[k]
		for _, i := range nr.Revives {
			id := p.ID(i)
			out = append(out, order.Warning{Code: order.WarnPatchRevivesDoomed, ID: id, Path: p.Path(i),
				Message: fmt.Sprintf("the patch of handler %s of subscriber %s (notified of %s) re-references doomed object %s: the model written back keeps it, flagged destroyed, in Objects and ObjectsCopy (a patch drops a reference with null)",
					n.Handler, n.Subscriber, p.ID(n.Publisher), id)})
		}
	}
	return out
}

// Patches returns the notify hooks' merge patches by subscriber id, in
// the order the notifications ran.
func (r *ApplyResult) Patches(p *order.Plan) map[string][]json.RawMessage {
	out := map[string][]json.RawMessage{}
	for i, n := range r.Notifications {
		if n.Patch != nil {
			s := p.Notifications[i].Subscriber
			out[s] = append(out[s], n.Patch)
		}
	}
	return out
}

// applier carries one applyPlan run.
type applier struct {
	ctx  context.Context
	p    *order.Plan
	opts ApplyOptions
	res  *ApplyResult

	mu       sync.Mutex
	stopping bool   // fail-fast tripped
	started  []bool // by object: its destroy began, so block leaves it be
	progress Progress
	patches  writeback.PatchChecker
	// barrier is the journal's last record when the current group's
	// notifications or destroys began: every record up to it is durable
	// before a hook of the group starts (set by parallel, read by run).
	barrier int64
	// ended holds, by object id, the end record of its last destroy hook
	// in this run: durable before its next destroy hook starts.
	ended map[string]int64
	// sums remembers the hooks hashed (HookSHA256's check), by identity.
	sums hook.Sums
}

// step updates the progress under the lock and reports it.
func (a *applier) step(f func(*Progress)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stepLocked(f)
}

func (a *applier) stepLocked(f func(*Progress)) {
	f(&a.progress)
	if a.opts.Progress != nil {
		a.opts.Progress(a.progress)
	}
}

// applyPlan carries out plan p (docs/design.md, "The order", "Hooks" and "Lock,
// journal and resume"): the notifications group by group in ascending index,
// then the destroys group by group in descending index, objects of one group
// in parallel. A failed destroy blocks every object that must come after it,
// transitively; the rest go on. Every state change and hook run goes to the
// journal; what a hook depends on is durable before it starts
// (docs/journal.md, "Group commit"); hooks the journal says completed are
// not run again. The error is for the journal alone (the run cannot be
// recorded); hook failures are in the result.
func applyPlan(ctx context.Context, p *order.Plan, opts ApplyOptions) (*ApplyResult, error) {
	if opts.Parallelism < 1 {
		opts.Parallelism = 1
	}
	if opts.RunHook == nil {
		opts.RunHook = hook.Run
	}
	a := &applier{ctx: ctx, p: p, opts: opts, res: &ApplyResult{
		Objects:       make([]ObjectResult, len(p.Objects)),
		Notifications: make([]NotifyResult, len(p.Notifications)),
	}, started: make([]bool, len(p.Objects)), ended: map[string]int64{}}
	a.progress = Progress{Notifications: len(p.Notifications), Objects: len(p.Objects), Groups: len(p.Groups)}
	// The totals before the first step ends: a long first hook is shown
	// as 0 of them done, not 0 of 0.
	a.step(func(*Progress) {})
	for i := range a.res.Objects {
		a.res.Objects[i] = ObjectResult{Outcome: OutcomePending, BlockedBy: -1}
		if err := a.advance(p.ID(i), journal.StateDoomed); err != nil {
			return a.res, err
		}
	}
	if err := a.notifyAll(); err != nil {
		return a.res, err
	}
	for k, g := range p.Groups {
		a.step(func(pr *Progress) { pr.Group, pr.Step = g.Index, k+1 })
		if err := a.destroyGroup(g); err != nil {
			return a.res, err
		}
	}
	a.res.Interrupted = a.drained() || ctx.Err() != nil
	return a.res, nil
}

func (a *applier) drained() bool {
	if a.ctx.Err() != nil {
		return true
	}
	select {
	case <-a.opts.Drain:
		return true
	default:
		return false
	}
}

// mayStart reports whether a new hook may start.
func (a *applier) mayStart() bool {
	a.mu.Lock()
	stopping := a.stopping
	a.mu.Unlock()
	return !stopping && !a.drained()
}

// lifecycle is the order of the states an object passes through in a run.
var lifecycle = []journal.State{journal.StateDoomed, journal.StateNotified, journal.StateDestroying, journal.StateDestroyed}

// advance records the object's way to state to, through the states in
// between (a resumed run may find it further on already, or failed).
func (a *applier) advance(id string, to journal.State) error {
	j := a.opts.Journal
	cur := j.State(id)
	if cur == to {
		return nil
	}
	if cur == journal.StateFailed || cur == journal.StateAlive {
		if err := j.SetState(id, journal.StateDoomed); err != nil {
			return err
		}
		cur = journal.StateDoomed
	}
	start, target := -1, -1
	for k, s := range lifecycle {
		if s == cur {
			start = k
		}
		if s == to {
			target = k
		}
	}
	if target <= start {
		return nil // already there or further on
	}
	for k := start + 1; k <= target; k++ {
		if err := j.SetState(id, lifecycle[k]); err != nil {
			return err
		}
		if lifecycle[k] == to {
			return nil
		}
	}
	return nil
}

// parallel runs fn for each item, at most Parallelism at a time, and
// waits for all of them. It stops starting new ones when mayStart says so.
// The items start in order, each on the first of Parallelism workers that
// is free (the caller's goroutine is one of them): a goroutine an item,
// handed a slot by the caller, cost a wake-up and a stack each (a fifth of
// an apply of 97,130 objects without hooks).
//
// It is called once per group and phase: what was journalled before it
// is what the group's hooks depend on (earlier groups, earlier phases), so
// run makes it durable before the first hook of the group starts.
func (a *applier) parallel(items []int, fn func(int) error) error {
	a.mu.Lock()
	a.barrier = a.opts.Journal.Written()
	a.mu.Unlock()
	var (
		next     atomic.Int64
		errMu    sync.Mutex
		firstErr error
	)
	// A hook's document holds the model's bytes: a mapped model truncated
	// meanwhile makes the worker reading them fault, which is the item's
	// error naming the file, not a crash.
	docs := func() []*snapshot.Document { return []*snapshot.Document{a.p.Diff.Snapshot.Doc, a.p.Diff.Incoming.Doc} }
	protected := func(item int) (err error) {
		defer snapshot.Protect(&err, docs)()
		return fn(item)
	}
	work := func() {
		// Asked before each item: a drain or a failure under
		// --fail-fast may have come while the previous one ran.
		for a.mayStart() {
			k := int(next.Add(1) - 1)
			if k >= len(items) {
				return
			}
			if err := protected(items[k]); err != nil {
				errMu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				errMu.Unlock()
			}
		}
	}
	var wg sync.WaitGroup
	for range min(a.opts.Parallelism, len(items)) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	return firstErr
}

// notifyAll runs the notifications, groups in ascending index.
func (a *applier) notifyAll() error {
	p := a.p
	byGroup := map[int][]int{}
	for i, n := range p.Notifications {
		byGroup[n.Group] = append(byGroup[n.Group], i)
	}
	for g := len(p.Groups) - 1; g >= 0; g-- {
		grp := p.Groups[g]
		if err := a.parallel(byGroup[grp.Index], func(i int) error {
			defer a.step(func(pr *Progress) { pr.NotificationsDone++ })
			return a.notify(i)
		}); err != nil {
			return err
		}
		if a.drained() {
			return nil
		}
		for _, i := range grp.Objects {
			if err := a.advance(p.ID(int(i)), journal.StateNotified); err != nil {
				return err
			}
		}
	}
	return nil
}

// notify runs the handler hook of notification i: <C>/notify/<handler> for
// the subscriber's class C (docs/design.md, "Hooks"). Its patch is checked
// against the rules of the write-back (writeback.PatchChecker) before the
// hook's end is journalled: a patch that breaks them fails the
// notification.
func (a *applier) notify(i int) error {
	p := a.p
	n := p.Notifications[i]
	pub := p.Header(n.Publisher)
	snap, in := p.Diff.Snapshot, p.Diff.Incoming
	subTree, subIdx := in, int32(-1)
	if j, ok := in.Lookup(n.Subscriber); ok {
		subIdx = j
	} else if j, ok := snap.Lookup(n.Subscriber); ok {
		subTree, subIdx = snap, j
	}
	if subIdx < 0 {
		return nil
	}
	sub, subType := &subTree.Objects[subIdx], subTree.Type(subIdx)
	f, ok, old := a.handlerHook(i, subType, n.Handler)
	if !ok {
		if len(old) > 0 {
			a.res.Notifications[i].Err = fmt.Errorf("no hook for handler %s of %s: %s is where notify hooks were kept before, and does not run; move it to %s",
				n.Handler, n.Subscriber, old[0], filepath.Join(filepath.Dir(old[0]), hook.NotifyDir, n.Handler))
		}
		return nil
	}
	key := journal.HookKey{Hook: f.Path, Event: n.Handler, ID: pub.ID, Subscriber: n.Subscriber}
	run := &HookRun{Hook: f.Path, Class: f.Class, Event: hook.EventNotify}
	a.res.Notifications[i].Hook = run
	if done, ok := a.opts.Resume.Done[key]; ok && done.OK {
		run.Resumed, run.ExitCode = true, done.Exit
		if done.Patch != nil {
			// An earlier objgc may have journalled a patch without
			// these checks: one the write-back would refuse on every
			// run. The hook is not run again (it is done); its patch
			// is dropped.
			if err := a.patches.Accept(p, n.Subscriber, done.Patch); err != nil {
				err = fmt.Errorf("hook %s notify %s of %s: the patch that %s records from an earlier run is rejected, and not applied: %w",
					f.Path, n.Handler, pub.ID, a.opts.Journal.Path(), err)
				run.Error = err.Error()
				a.res.Notifications[i].Err = err
				return nil
			}
		}
		a.res.Notifications[i].Patch = done.Patch
		a.res.Notifications[i].Revives = a.revives(n.Subscriber, done.Patch)
		return nil
	}
	doc := hook.Document{
		Event:      hook.EventNotify,
		Object:     rawObject(snap, pub.Snapshot),
		OwnerID:    ownerID(&pub),
		Subscriber: json.RawMessage(subTree.Doc.Data[sub.Start:sub.End]),
	}
	inv := a.invocation(f, &pub, n.Group, doc)
	inv.Handler, inv.SubscriberID = n.Handler, n.Subscriber
	inv.CheckPatch = func(patch json.RawMessage) error { return a.patches.Accept(p, n.Subscriber, patch) }
	res, err := a.run(key, inv, run)
	if err != nil {
		a.res.Notifications[i].Err = err
		var he *hook.HookError
		if errors.As(err, &he) {
			return nil // a failed notification is a warning
		}
		return err
	}
	a.res.Notifications[i].Patch = res.Patch
	a.res.Notifications[i].Revives = a.revives(n.Subscriber, res.Patch)
	return nil
}

// revives returns the doomed objects an accepted patch for subscriber sub
// re-references (writeback.RevivedBy); none when the patch is not
// applied: no patch, or a subscriber that leaves the model.
func (a *applier) revives(sub string, patch json.RawMessage) []int {
	if patch == nil {
		return nil
	}
	if in := a.p.Diff.Incoming; in.Null {
		return nil
	} else if _, ok := in.Lookup(sub); !ok {
		return nil
	}
	return writeback.RevivedBy(a.p, patch)
}

// destroyGroup destroys the objects of one group in parallel.
func (a *applier) destroyGroup(g order.Group) error {
	var todo []int
	for _, i := range g.Objects {
		if a.res.Objects[i].Outcome == OutcomePending && a.res.Objects[i].BlockedBy < 0 {
			todo = append(todo, int(i))
		}
	}
	return a.parallel(todo, func(i int) error {
		err := a.destroy(i)
		switch a.res.Objects[i].Outcome {
		case OutcomeDestroyed:
			a.step(func(pr *Progress) { pr.ObjectsDone++ })
		case OutcomeFailed:
			a.step(func(pr *Progress) { pr.ObjectsDone++; pr.Failed++ })
		}
		return err
	})
}

// destroy runs the destroy hooks of object i, its class's then each
// ancestor's, one after the other.
func (a *applier) destroy(i int) error {
	p := a.p
	o := p.Header(i)
	snap := p.Diff.Snapshot
	objType := snap.Type(o.Snapshot)
	r := &a.res.Objects[i]
	// A failure in this group may have blocked i since the group began
	// (a successor whose edge to the failed object was a broken cycle):
	// either block sees i started and leaves it be, or i sees it blocked.
	a.mu.Lock()
	blocked := r.BlockedBy >= 0
	a.started[i] = !blocked
	a.mu.Unlock()
	if blocked {
		return nil
	}
	if a.opts.Journal.State(o.ID) == journal.StateDestroyed {
		r.Outcome = OutcomeDestroyed // an earlier run on these inputs did it
		r.Hooks, r.Err = a.resumedHooks(&o, a.destroyHooks(i, objType))
		return nil
	}
	if err := a.advance(o.ID, journal.StateDestroying); err != nil {
		return err
	}
	doc := hook.Document{Event: hook.EventDestroy, Object: rawObject(snap, o.Snapshot), OwnerID: ownerID(&o)}
	var failure error
	for _, f := range a.destroyHooks(i, objType) {
		key := journal.HookKey{Hook: f.Path, Event: hook.EventDestroy, ID: o.ID}
		run := HookRun{Hook: f.Path, Class: f.Class, Event: hook.EventDestroy}
		if done, ok := a.opts.Resume.Done[key]; ok && done.OK {
			run.Resumed, run.ExitCode = true, done.Exit
			r.Hooks = append(r.Hooks, run)
			continue
		}
		if !a.mayStart() {
			return nil // interrupted between two hooks: stays destroying, resumed next run
		}
		_, err := a.run(key, a.invocation(f, &o, o.Group, doc), &run)
		r.Hooks = append(r.Hooks, run)
		if err != nil {
			var he *hook.HookError
			if !errors.As(err, &he) {
				return err
			}
			failure = err
			break
		}
	}
	if failure != nil && !a.opts.Force {
		r.Outcome, r.Err = OutcomeFailed, failure
		if err := a.opts.Journal.SetState(o.ID, journal.StateFailed); err != nil {
			return err
		}
		a.block(i)
		return nil
	}
	r.Outcome, r.Err = OutcomeDestroyed, failure
	return a.advance(o.ID, journal.StateDestroyed)
}

// block marks every object that must come after failed object i blocked,
// transitively, and trips --fail-fast.
func (a *applier) block(i int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.opts.FailFast {
		a.stopping = true
	}
	queue := a.p.Successors(i)
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		r := &a.res.Objects[s]
		if a.started[s] || r.Outcome != OutcomePending || r.BlockedBy >= 0 {
			continue
		}
		r.Outcome, r.BlockedBy = OutcomeBlocked, i
		a.stepLocked(func(pr *Progress) { pr.ObjectsDone++ })
		queue = append(queue, a.p.Successors(s)...)
	}
}

func (a *applier) invocation(f hook.Found, o *order.Planned, group int, doc hook.Document) hook.Invocation {
	stdin, _ := doc.Marshal()
	event := hook.EventDestroy
	if doc.Event == hook.EventNotify {
		event = hook.EventNotify + " " + termsafe.String(f.Handler)
	}
	inv := hookInvocation(f, o.ID, o.Type, group, a.opts.DoomedFile)
	if inv.User != nil {
		if d, ok := a.opts.DoomedFiles[inv.User.UID]; ok {
			inv.Doomed = d
		}
	}
	inv.Stdin, inv.Env, inv.Timeout, inv.Grace = stdin, a.opts.Env, a.opts.HookTimeout, a.opts.Grace
	inv.SHA256, inv.Sums = a.opts.HookSHA256[f.Path], &a.sums
	if f.Source.PackageDir != "" && a.opts.RecordedSHA256 != nil {
		if sum, ok := a.opts.RecordedSHA256(f.Path); ok {
			inv.SHA256, inv.Recorded = sum, true
		}
	}
	if a.opts.Stderr != nil {
		prefix := termsafe.String(o.ID) + " " + event + ": "
		inv.Stderr = func(line string) { a.opts.Stderr(prefix + line) }
	}
	return inv
}

// run runs one hook with its start and end journalled. Before the hook
// starts, what it depends on is made durable (one fsync shared with the
// other hooks starting now, none when an earlier one covered it): the
// records before its group began, and for a destroy hook the end record
// of its object's previous destroy hook. Its own start record is only
// written: a hook without a durable end record runs again on resume
// anyway. Its end record is fsynced in the background (Journal.EndHook).
func (a *applier) run(key journal.HookKey, inv hook.Invocation, run *HookRun) (*hook.Result, error) {
	j := a.opts.Journal
	a.mu.Lock()
	dep := a.barrier
	destroy := key.Subscriber == "" // a notification always has its subscriber
	if destroy {
		dep = max(dep, a.ended[key.ID])
	}
	a.mu.Unlock()
	if err := j.Sync(dep); err != nil {
		return nil, err
	}
	if err := j.HookStarted(key); err != nil {
		return nil, err
	}
	res, err := a.opts.RunHook(a.ctx, inv)
	if res != nil {
		run.ExitCode, run.Duration, run.StderrTail = res.ExitCode, res.Duration, res.StderrTail
	}
	if err != nil {
		run.Error = err.Error()
		var he *hook.HookError
		if !errors.As(err, &he) {
			return res, fmt.Errorf("running hook %s: %w", inv.Hook, err)
		}
	}
	end := journal.HookResult{OK: err == nil, Exit: run.ExitCode}
	if res != nil && err == nil {
		end.Patch = res.Patch
	}
	seq, jerr := j.EndHook(key, end)
	if jerr != nil {
		return res, jerr
	}
	if destroy {
		a.mu.Lock()
		a.ended[key.ID] = seq
		a.mu.Unlock()
	}
	return res, err
}

// rawObject returns the JSON of snapshot object i, owned objects inline.
func rawObject(t *snapshot.Tree, i int32) json.RawMessage {
	o := &t.Objects[i]
	return json.RawMessage(t.Doc.Data[o.Start:o.End])
}

func ownerID(o *order.Planned) *string {
	if o.Owner == "" {
		return nil
	}
	id := o.Owner
	return &id
}

// resumedHooks returns the destroy hooks of o that an earlier run on these
// inputs ran (Resume.Done), in the order they run, each marked resumed, so
// that the report shows them; and, when one of them failed (that run
// counted o destroyed under --force), the failure.
func (a *applier) resumedHooks(o *order.Planned, hooks []hook.Found) ([]HookRun, error) {
	var runs []HookRun
	var failure error
	for _, f := range hooks {
		done, ok := a.opts.Resume.Done[journal.HookKey{Hook: f.Path, Event: hook.EventDestroy, ID: o.ID}]
		if !ok {
			continue
		}
		run := HookRun{Hook: f.Path, Class: f.Class, Event: hook.EventDestroy, Resumed: true, ExitCode: done.Exit}
		if !done.OK {
			run.Error = fmt.Sprintf("failed in an earlier run (exit status %d)", done.Exit)
			if failure == nil {
				failure = fmt.Errorf("hook %s destroy of %s failed in an earlier run (exit status %d); --force counted it destroyed", f.Path, o.ID, done.Exit)
			}
		}
		runs = append(runs, run)
	}
	return runs, failure
}

// destroyHooks returns the destroy hooks of object i, of type t: those
// the preparation found (ApplyOptions.Hooks), else Finder's.
func (a *applier) destroyHooks(i int, t snapshot.Type) []hook.Found {
	if h := a.opts.Hooks; h != nil {
		return h.Of(i).Destroy
	}
	return a.opts.Finder.DestroyHooks(a.ctx, t)
}

// handlerHook returns the hook of notification i (handler of a
// subscriber of type t) and, when it has none, the files at the old
// place of notify hooks: those the preparation found
// (ApplyOptions.Hooks), else Finder's.
func (a *applier) handlerHook(i int, t snapshot.Type, handler string) (hook.Found, bool, []string) {
	if h := a.opts.Hooks; h != nil {
		if f := h.Notify[i]; f != nil {
			return *f, true, nil
		}
		return hook.Found{}, false, h.OldNotify[i]
	}
	f, ok := a.opts.Finder.HandlerHook(a.ctx, t, handler)
	if ok {
		return f, true, nil
	}
	return f, false, a.opts.Finder.OldHandlerPlaces(a.ctx, t, handler)
}
