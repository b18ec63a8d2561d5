package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/destroy/order"
)

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

// applyReportFormatVersion is the "format_version" of apply's JSON
// report. 2: a hook run names its file "path" (was "hook") and a notify
// hook's event is "notify" (was the handler), as in a plan.
const applyReportFormatVersion = "2"

// applyReport is the JSON report of apply (docs/apply.md, docs/json.md).
type applyReport struct {
	FormatVersion string `json:"format_version"`
	Target        string `json:"target"`
	Unchanged     bool   `json:"unchanged"` // nothing to do: the target was not written
	// AppliedAlready: the saved plan run was carried out already (its
	// objects are gone or flagged destroyed, nothing else is to be
	// done): nothing was done or written.
	AppliedAlready bool `json:"applied_already,omitempty"`
	// planned are, when AppliedAlready, the objects the saved plan
	// lists, destroyed by the run that applied it: the JUnit report of
	// a retried job shows them as done.
	planned []applyReportObject
	// junit is what the JUnit report holds besides the outcome
	// (cmd/junit.go): a plan's report, or the problem that stopped
	// apply before it ran anything.
	junit         junitMore
	Objects       []applyReportObject `json:"objects"`
	Notifications []applyReportNotify `json:"notifications"`
	// DestroyedWithoutHook lists the objects destroyed with no destroy
	// hook to run: nothing outside the model was cleaned up for them.
	DestroyedWithoutHook []string `json:"destroyed_without_hook"`
	// Warnings: code, message, id and path, as in a plan
	// (destroy.Report.Warnings: package_missing).
	Warnings []order.Warning `json:"warnings"`
	Summary  applySummary    `json:"summary"`
}

// applyReportObject is one object of apply's report: its outcome (state,
// hook runs), not its place in the plan (planfile.Object says why the
// two are apart).
type applyReportObject struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Group     int             `json:"group"`
	State     destroy.Outcome `json:"state"`
	BlockedBy *string         `json:"blocked_by,omitempty"`
	Error     string          `json:"error,omitempty"`
	// Forced: a destroy hook failed and --force counted the object
	// destroyed anyway; Error says what failed.
	Forced bool             `json:"forced,omitempty"`
	Hooks  []applyReportRun `json:"hooks"`
	// skip, when set, is the JUnit <skipped> message of an object that
	// was planned and not run (cmd/junit.go).
	skip string
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
	// Revives are the doomed ids the patch sets as values: kept in the
	// model flagged destroyed (a patch_revives_doomed warning each).
	Revives []string `json:"revives,omitempty"`
	Error   string   `json:"error,omitempty"`
}

type applySummary struct {
	Destroyed           int  `json:"destroyed"`
	Failed              int  `json:"failed"`
	Blocked             int  `json:"blocked"`
	Pending             int  `json:"pending"`
	Forced              int  `json:"forced"`
	WithoutHook         int  `json:"destroyed_without_hook"`
	NotificationsFailed int  `json:"notifications_failed"`
	Warnings            int  `json:"warnings"`
	Interrupted         bool `json:"interrupted"`
}

func newApplyReport(ai *applyInputs, p *order.Plan, r *destroy.ApplyResult) *applyReport {
	rep := &applyReport{FormatVersion: applyReportFormatVersion, Target: ai.target, Unchanged: ai.unchanged, AppliedAlready: ai.applied, Objects: []applyReportObject{}, Notifications: []applyReportNotify{}, DestroyedWithoutHook: []string{}, Warnings: []order.Warning{}}
	if ai.applied && ai.plan != nil {
		for _, g := range ai.plan.Groups {
			for _, o := range g.Objects {
				rep.planned = append(rep.planned, applyReportObject{ID: o.ID, Type: o.Type, Group: g.Index, State: destroy.OutcomeDestroyed})
			}
		}
	}
	rep.Warnings = append(rep.Warnings, ai.warnings...)
	rep.Summary.Warnings = len(rep.Warnings)
	for _, g := range p.Groups {
		for _, i := range g.Objects {
			o, res := p.Header(int(i)), &r.Objects[i] // the report shows no path
			ro := applyReportObject{ID: o.ID, Type: o.Type, Group: o.Group, State: res.Outcome, Hooks: []applyReportRun{}}
			if res.BlockedBy >= 0 {
				id := p.ID(res.BlockedBy)
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
		rn := applyReportNotify{Publisher: p.ID(n.Publisher), Subscriber: n.Subscriber, Handler: n.Handler, Patch: res.Patch}
		if res.Hook != nil {
			rn.Hook = &applyReportRun{HookRun: *res.Hook, DurationMS: res.Hook.Duration.Milliseconds()}
		}
		if res.Err != nil {
			rn.Error = res.Err.Error()
			rep.Summary.NotificationsFailed++
		}
		for _, i := range res.Revives {
			rn.Revives = append(rn.Revives, p.ID(i))
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

// writeApplyReport writes apply's report of r, the run of plan p: to
// opts.JUnit when asked, then as JSON or as text lines.
func writeApplyReport(streams *IO, opts applyOptions, ai *applyInputs, p *order.Plan, r *destroy.ApplyResult) error {
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
	// About a hundred bytes a line; fmt would be a visible part of a
	// large report's time: the common line is written piece by piece.
	b.Grow(100 * len(rep.Objects))
	writeReportObjects(&b, pal, &opts, rep)
	for _, n := range rep.Notifications {
		if opts.Verbose && n.Error == "" {
			writeNotified(&b, n)
		}
		if n.Error != "" {
			fmt.Fprintf(&b, "%s %s of %s (publisher %s): %s\n", pal.bad("failed notification"), term(n.Handler), term(n.Subscriber), pal.id(term(n.Publisher)), term(n.Error))
			if n.Hook != nil {
				writeStderrTails(&b, []applyReportRun{*n.Hook})
			}
		}
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(&b, "%s %s: %s\n", pal.warn("warning:"), w.Code, term(w.Message))
	}
	if !opts.Quiet || needsSaying(rep) {
		writeReportSummary(&b, ai, rep.Summary)
	}
	_, err := io.WriteString(streams.Out, b.String())
	return err
}

// writeReportObjects writes the text report's line of each object (under
// --quiet only those that went wrong, and a count of the rest).
func writeReportObjects(b *strings.Builder, pal *palette, opts *applyOptions, rep *applyReport) {
	noHook := pal.warn("no destroy hook")
	var long *quietCounts
	if opts.Quiet {
		long = newQuietCounts(rep.Summary)
	}
	for _, o := range rep.Objects {
		if long.add(o) {
			continue
		}
		switch o.State {
		case destroy.OutcomeDestroyed:
			if opts.Quiet && !o.Forced && len(o.Hooks) > 0 {
				break // all went well: nothing to say
			}
			hooks := noHook
			if n := len(o.Hooks); n > 0 {
				hooks = fmt.Sprintf("%d %s", n, plural(n, "hook", "hooks"))
				if k := resumedHooks(o.Hooks); k > 0 {
					hooks += fmt.Sprintf(", %d resumed", k)
				}
			}
			if o.Forced {
				fmt.Fprintf(b, "%s %s %s (group %d, %s): %s\n", pal.bad("destroyed (forced)"), term(orDash(o.Type)), pal.id(term(o.ID)), o.Group, hooks, term(o.Error))
				writeStderrTails(b, o.Hooks)
				break
			}
			b.WriteString("destroyed ")
			b.WriteString(term(orDash(o.Type)))
			b.WriteByte(' ')
			b.WriteString(pal.id(term(o.ID)))
			b.WriteString(" (group ")
			b.WriteString(strconv.Itoa(o.Group))
			b.WriteString(", ")
			b.WriteString(hooks)
			b.WriteString(")\n")
			if opts.Verbose {
				writeHookRuns(b, o.Hooks)
			}
		case destroy.OutcomeFailed:
			fmt.Fprintf(b, "%s %s %s: %s\n", pal.bad("failed"), term(orDash(o.Type)), pal.id(term(o.ID)), term(o.Error))
			writeStderrTails(b, o.Hooks)
		case destroy.OutcomeBlocked:
			fmt.Fprintf(b, "%s %s %s: must come after failed %s\n", pal.warn("blocked"), term(orDash(o.Type)), pal.id(term(o.ID)), term(*o.BlockedBy))
		default:
			fmt.Fprintf(b, "not reached %s %s\n", term(orDash(o.Type)), pal.id(term(o.ID)))
		}
	}
	long.write(b, pal)
}

// writeReportSummary writes the text report's last line: the counts and
// what was written.
func writeReportSummary(b *strings.Builder, ai *applyInputs, s applySummary) {
	if ai.applied {
		fmt.Fprintf(b, "plan %s was applied already: none of its %d %s is left in %s, and nothing else is to be done; nothing written\n",
			term(ai.planFile), ai.planObjects, plural(ai.planObjects, "object", "objects"), term(ai.planModel))
		return
	}
	fmt.Fprintf(b, "%d destroyed, %d failed, %d blocked", s.Destroyed, s.Failed, s.Blocked)
	if s.Pending > 0 {
		fmt.Fprintf(b, ", %d not reached", s.Pending)
	}
	if s.Forced > 0 {
		fmt.Fprintf(b, ", %d forced", s.Forced)
	}
	if s.WithoutHook > 0 {
		fmt.Fprintf(b, ", %d destroyed without a hook", s.WithoutHook)
	}
	if s.NotificationsFailed > 0 {
		fmt.Fprintf(b, ", %d %s failed", s.NotificationsFailed, plural(s.NotificationsFailed, "notification", "notifications"))
	}
	switch {
	case ai.unchanged:
		fmt.Fprintf(b, "; nothing to do: %s left as it was\n", term(ai.target))
	case ai.target == "-":
		b.WriteString("; wrote standard output\n")
	default:
		fmt.Fprintf(b, "; wrote %s\n", term(ai.target))
	}
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
