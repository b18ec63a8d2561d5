package cmd

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/destroy/hook"
)

// runningHooks counts the hooks an apply is running and when each
// started, so that the first interrupt can say at once what happens next
// (docs/apply.md, "Interrupts"): no new hook starts, how many are
// running and for at most how long, and that a second interrupt stops
// them now.
type runningHooks struct {
	mu      sync.Mutex
	started map[*hook.Invocation]time.Time
}

// wrap returns run, counting the hooks it runs.
func (r *runningHooks) wrap(run destroy.HookRunner) destroy.HookRunner {
	return func(ctx context.Context, inv hook.Invocation) (*hook.Result, error) {
		r.mu.Lock()
		if r.started == nil {
			r.started = map[*hook.Invocation]time.Time{}
		}
		r.started[&inv] = time.Now()
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			delete(r.started, &inv)
			r.mu.Unlock()
		}()
		return run(ctx, inv)
	}
}

// longest returns how many hooks are running and, of timeout each
// (--hook-timeout), the most that is left to any of them at now.
func (r *runningHooks) longest(now time.Time, timeout time.Duration) (n int, left time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.started {
		left = max(left, t.Add(timeout).Sub(now))
	}
	return len(r.started), max(left, 0)
}

// watchInterrupts prints, on the first interrupt (interrupt closed),
// what happens next, and on the second (ctx done) that the running hooks
// are being stopped; println writes one line. It returns a function
// that ends the watch, to be called once the hooks are done.
func watchInterrupts(ctx context.Context, interrupt <-chan struct{}, hooks *runningHooks, timeout, grace time.Duration, println func(string)) (stop func()) {
	done := make(chan struct{})
	var once sync.Once
	stop = func() { once.Do(func() { close(done) }) }
	if interrupt == nil {
		return stop
	}
	go func() {
		select {
		case <-interrupt:
		case <-done:
			return
		}
		n, left := hooks.longest(time.Now(), timeout)
		if n == 0 {
			println("objgc: interrupted: no new hook starts; stopping (interrupt again to stop at once)")
		} else {
			println(fmt.Sprintf("objgc: interrupted: no new hook starts; waiting for %d running %s, at most %s more (--hook-timeout %s); interrupt again to stop %s now (SIGTERM to %s process %s, SIGKILL %s later)",
				n, plural(n, "hook", "hooks"), left.Round(time.Second), timeout, plural(n, "it", "them"), plural(n, "its", "their"), plural(n, "group", "groups"), grace))
		}
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		if n, _ := hooks.longest(time.Now(), timeout); n > 0 {
			println(fmt.Sprintf("objgc: interrupted again: stopping %d running %s now; the model is written for what completed", n, plural(n, "hook", "hooks")))
		}
	}()
	return stop
}
