package cmd

import (
	"fmt"
	"strings"

	"github.com/objgc/objgc/destroy"
)

// apply --quiet prints errors and warnings only, for cron and CI logs: no
// progress line, no hook stderr as it comes (a failed hook's tail is in
// the report), no "resuming" line, and in the text report only failed,
// blocked, not reached and forced objects, objects destroyed without a
// destroy hook, failed notifications, and then the summary; nothing at
// all when every object was destroyed by its hooks. A kind of object
// that is no failure of its own (blocked, not reached, without a hook)
// gets one line a type with a count when it is more than quietListMax. Errors, resume notes
// and the JSON report (--format json) are as without it. --verbose adds
// each hook run (exit status, duration) and each notification that went
// well to the text report. docs/apply.md, "The report".

// quietListMax is the most objects of one kind (blocked, not reached,
// destroyed without a destroy hook) that --quiet lists one a line; beyond
// it, one line a type with a count. Failed and forced objects and failed
// notifications are always listed, each with its error.
const quietListMax = 20

// quietCounts gathers, for --quiet, the objects of the kinds whose list
// would be long, by type in report order. A nil *quietCounts gathers
// nothing.
type quietCounts struct {
	kinds [3]quietKind // blocked, not reached, destroyed without a hook
}

type quietKind struct {
	on     bool
	types  []string
	counts map[string]int
}

func newQuietCounts(s applySummary) *quietCounts {
	q := &quietCounts{}
	for k, n := range []int{s.Blocked, s.Pending, s.WithoutHook} {
		q.kinds[k] = quietKind{on: n > quietListMax, counts: map[string]int{}}
	}
	return q
}

// add counts o when its kind is counted, not listed, and reports whether
// it did.
func (q *quietCounts) add(o applyReportObject) bool {
	if q == nil {
		return false
	}
	k := -1
	switch {
	case o.State == destroy.OutcomeBlocked:
		k = 0
	case o.State == destroy.OutcomePending:
		k = 1
	case o.State == destroy.OutcomeDestroyed && !o.Forced && len(o.Hooks) == 0:
		k = 2
	}
	if k < 0 || !q.kinds[k].on {
		return false
	}
	kind := &q.kinds[k]
	t := orDash(o.Type)
	if kind.counts[t] == 0 {
		kind.types = append(kind.types, t)
	}
	kind.counts[t]++
	return true
}

// write writes one line a type of each counted kind.
func (q *quietCounts) write(b *strings.Builder, pal *palette) {
	if q == nil {
		return
	}
	heads := [3]string{pal.warn("blocked:"), "not reached:", "destroyed without a destroy hook:"}
	tails := [3]string{"each must come after a failed object; --format json lists them", "--format json lists them", "--format json lists them"}
	for k, kind := range q.kinds {
		for _, t := range kind.types {
			fmt.Fprintf(b, "%s %d %s (%s)\n", heads[k], kind.counts[t], term(t), tails[k])
		}
	}
}

// hookLines is the destroy.ApplyOptions.Stderr of a run: hooks' stderr
// lines above the progress line, none under --quiet.
func hookLines(opts applyOptions, progress *progressLine) func(string) {
	if opts.Quiet {
		return nil
	}
	return progress.Println
}

// needsSaying reports whether a report holds anything --quiet shows:
// something that failed, was blocked, was not reached or was forced, an
// object destroyed without a destroy hook, a failed notification.
func needsSaying(rep *applyReport) bool {
	s := rep.Summary
	return s.Failed+s.Blocked+s.Pending+s.Forced+s.WithoutHook+s.NotificationsFailed > 0 || s.Interrupted
}

// writeHookRuns writes one line a hook run, for --verbose.
func writeHookRuns(b *strings.Builder, hooks []applyReportRun) {
	for _, h := range hooks {
		fmt.Fprintf(b, "    hook %s %s (class %s): %s\n", h.Event, term(h.Hook), term(h.Class), runOutcome(h))
	}
}

// writeNotified writes a notification that went well, for --verbose.
func writeNotified(b *strings.Builder, n applyReportNotify) {
	if n.Hook == nil {
		fmt.Fprintf(b, "notified %s %s of %s: no hook\n", term(n.Subscriber), term(n.Handler), term(n.Publisher))
		return
	}
	fmt.Fprintf(b, "notified %s %s of %s: hook %s: %s\n", term(n.Subscriber), term(n.Handler), term(n.Publisher), term(n.Hook.Hook), runOutcome(*n.Hook))
}

func runOutcome(h applyReportRun) string {
	if h.Resumed {
		return "done by the stopped run, not run again"
	}
	return fmt.Sprintf("exit status %d in %dms", h.ExitCode, h.DurationMS)
}
