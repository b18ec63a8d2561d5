package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/destroy/hook"
)

// statusMaxRunning is how many running hooks a status line names; the
// rest are counted.
const statusMaxRunning = 5

// statusLine prints, where stderr is no terminal (a CI log), a line at a
// fixed interval while hooks run, as Terraform's "Still destroying...
// [30s elapsed]": so that a log does not stay silent for as long as a
// hook may take. It names the objects whose hooks are running. A
// terminal has the progress line instead. docs/apply.md, "Progress".
type statusLine struct {
	println func(string)
	start   time.Time
	stop    chan struct{}
	once    sync.Once
	done    chan struct{}

	mu      sync.Mutex
	pr      destroy.Progress
	running map[*hook.Invocation]time.Time
}

// startStatusLine starts the status line, printing through println every
// interval; Stop ends it.
func startStatusLine(println func(string), interval time.Duration) *statusLine {
	s := &statusLine{println: println, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{}),
		running: map[*hook.Invocation]time.Time{}}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case now := <-t.C:
				if line, ok := s.line(now); ok {
					s.println(line)
				}
			}
		}
	}()
	return s
}

// Stop ends the status line; no line is printed after it returns. Safe
// on a nil *statusLine and more than once.
func (s *statusLine) Stop() {
	if s == nil {
		return
	}
	s.once.Do(func() { close(s.stop) })
	<-s.done
}

// Progress records how far the run has come.
func (s *statusLine) Progress(pr destroy.Progress) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.pr = pr
	s.mu.Unlock()
}

// RunHook is hook.Run, with the hook counted as running meanwhile.
func (s *statusLine) RunHook(ctx context.Context, inv hook.Invocation) (*hook.Result, error) {
	s.mu.Lock()
	s.running[&inv] = time.Now()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.running, &inv)
		s.mu.Unlock()
	}()
	return hook.Run(ctx, inv)
}

// line is the status at now, and false when no hook is running.
func (s *statusLine) line(now time.Time) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.running) == 0 {
		return "", false
	}
	type run struct {
		inv   *hook.Invocation
		since time.Time
	}
	runs := make([]run, 0, len(s.running))
	for inv, since := range s.running {
		runs = append(runs, run{inv, since})
	}
	// Longest running first; ties by object id, so that the line is
	// stable.
	slices.SortFunc(runs, func(a, b run) int {
		if c := a.since.Compare(b.since); c != 0 {
			return c
		}
		return strings.Compare(a.inv.ObjectID, b.inv.ObjectID)
	})
	var b strings.Builder
	elapsed := roughly(now.Sub(s.start))
	pr := s.pr
	if pr.Group == 0 {
		fmt.Fprintf(&b, "objgc apply: still notifying [%s elapsed]: %d/%d notifications done; running: ", elapsed, pr.NotificationsDone, pr.Notifications)
	} else {
		fmt.Fprintf(&b, "objgc apply: still destroying [%s elapsed]: group %d (%d of %d), %d/%d objects done, %d failed; running: ",
			elapsed, pr.Group, pr.Step, pr.Groups, pr.ObjectsDone, pr.Objects, pr.Failed)
	}
	for k, r := range runs[:min(len(runs), statusMaxRunning)] {
		if k > 0 {
			b.WriteString(", ")
		}
		took := roughly(now.Sub(r.since))
		if r.inv.Handler != "" {
			fmt.Fprintf(&b, "handler %s of %s for %s (notify, %s)", term(r.inv.Handler), term(r.inv.SubscriberID), term(r.inv.ObjectID), took)
			continue
		}
		fmt.Fprintf(&b, "%s %s (destroy, %s)", term(orDash(r.inv.ObjectType)), term(r.inv.ObjectID), took)
	}
	if n := len(runs) - statusMaxRunning; n > 0 {
		fmt.Fprintf(&b, " and %d more", n)
	}
	return b.String(), true
}

// roughly rounds d to the second, or to the millisecond under a second.
func roughly(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}
