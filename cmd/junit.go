package cmd

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/destroy/planfile"
	"github.com/objgc/objgc/internal/termsafe"
)

// The JUnit XML of `objgc apply --junit FILE` (docs/apply.md, "JUnit")
// and of `objgc plan --junit FILE` (docs/plan-format.md, "JUnit")
// follows the Apache Ant JUnit schema that Jenkins and GitLab read
// (cmd/testdata/junit.xsd): <testsuites> holds one <testsuite> a group,
// deepest first, then one for the notifications, then one for what
// stopped the run or would (a refusal, an error); each suite has
// <properties>, its <testcase>s, <system-out> and <system-err>; a test
// case holds at most one of <failure>, <error> and <skipped>. One
// writer, writeJUnit, writes them all.

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Package    string          `xml:"package,attr"`
	ID         int             `xml:"id,attr"`
	Timestamp  string          `xml:"timestamp,attr"` // UTC, no zone: the schema's pattern
	Hostname   string          `xml:"hostname,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"` // seconds
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out"`
	SystemErr  string          `xml:"system-err"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure"`
	Error     *junitFailure `xml:"error"`
	Skipped   *junitSkipped `xml:"skipped"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// junitMore is what a JUnit report holds besides an apply's outcome: the
// report of a plan (plan --junit), and the report of an apply that
// stopped before it ran anything (a refusal, a stale plan, a lock held,
// an error). The zero value is an apply's report.
type junitMore struct {
	// command is "plan" or "apply" ("" is apply): the suites' package
	// is objgc.COMMAND, and the suite of problems and of "nothing to
	// destroy" is named "objgc COMMAND".
	command string
	// property is the suites' one property; its zero value is
	// {"target", the report's target}.
	property junitProperty
	// problems are test cases that do not pass, after the objects: why
	// apply would refuse a plan, or why a run stopped.
	problems []junitProblem
}

// junitProblem is a test case that names why plan or apply did not run
// or would not: a <failure> for a refusal of the plan or the model (its
// code as type and name), an <error> for a run that could not be
// carried out. Message and text are shown as they are (the caller made
// them terminal-safe).
type junitProblem struct {
	code    string // the case's name and the element's type
	message string
	text    string
	isError bool
}

// checkJUnitOut refuses, before anything runs, a --junit FILE that could
// not be written or that is one of apply's inputs (a saved plan's own
// included: opts names them once ai is resolved), its --write output, or
// the lock or journal file of any of them (checkOutput).
func checkJUnitOut(opts *applyOptions, ai *applyInputs) error {
	if opts.JUnit == "" {
		return nil
	}
	if opts.JUnit == "-" {
		return usageErrorf("--junit needs a file; the report on standard output is --format json")
	}
	files := []namedFile{{"the model input", opts.Model, false}, {"the --snapshot input", opts.Snapshot, false},
		{"the --graph input", opts.Graph, false}, {"the saved plan", ai.planFile, false}, {"the --write output", ai.target, false}}
	_, err := checkOutput("--junit", opts.JUnit, files, "the JUnit report would overwrite it")
	return err
}

// writeJUnitFile writes rep, the report of a run started at started, as
// JUnit XML to path, atomically.
func writeJUnitFile(path string, rep *applyReport, started time.Time) error {
	return writeFileAtomic(path, 0o644, func(w io.Writer) error { return writeJUnit(w, rep, started) })
}

// writeJUnit writes rep as JUnit XML: one test case a doomed object (its
// class name the object's type, its name the id), destroyed objects pass,
// a failed one is a <failure> with the hook's exit status and the tail of
// its stderr, a blocked object is <skipped> naming the failed object it
// must come after, an object not reached (interrupted, --fail-fast) is
// <skipped> saying so. Each notification is a test case of the
// notifications' suite; a failed one is a <failure>. rep.junit adds the
// cases of a plan's report or of a run that stopped before it ran
// anything: the planned objects (rep.planned, each skipped) and the
// problems, in a last suite.
//
// A <failure> is there exactly when apply exits 3 (or 130 when it was
// interrupted as well): a CI job and its test report never disagree.
// So an object --force counted destroyed passes, as apply's exit status
// says it did, and what failed goes to its suite's <system-err>.
//
// Strings from the model and from hooks go through termsafe (a line with
// a control character is written as a quoted Go string): XML 1.0 cannot
// carry most C0 controls even as character references, and a report is
// read on terminals too.
func writeJUnit(w io.Writer, rep *applyReport, started time.Time) error {
	host, err := os.Hostname()
	if err != nil || strings.TrimSpace(host) == "" {
		host = "localhost"
	}
	stamp := started.UTC().Format("2006-01-02T15:04:05")
	command := rep.junit.command
	if command == "" {
		command = "apply"
	}
	prop := rep.junit.property
	if prop.Name == "" {
		prop = junitProperty{"target", term(rep.Target)}
	}
	doc := junitSuites{}
	suite := func(name string) *junitSuite {
		doc.Suites = append(doc.Suites, junitSuite{Name: name, Package: "objgc." + command, ID: len(doc.Suites), Timestamp: stamp, Hostname: host,
			Properties: []junitProperty{prop}, Cases: []junitCase{}})
		return &doc.Suites[len(doc.Suites)-1]
	}
	var cur *junitSuite
	group := -1
	var total []time.Duration
	objects := rep.Objects
	if rep.AppliedAlready || rep.planned != nil {
		// A retried job: the plan was carried out by an earlier run,
		// and its objects are reported done, not left out (an empty
		// report fails Jenkins' junit step). Or a plan, or an apply
		// that stopped before it ran anything: the objects planned,
		// each skipped.
		objects = rep.planned
	}
	for _, o := range objects {
		if cur == nil || o.Group != group {
			group = o.Group
			cur = suite(fmt.Sprintf("group %d", group))
			total = append(total, 0)
			if rep.AppliedAlready {
				cur.SystemOut = "the plan was applied already by an earlier run: its objects are gone from the model or flagged destroyed; nothing was run or written now\n"
			}
		}
		var d time.Duration
		for _, h := range o.Hooks {
			d += h.Duration
		}
		total[len(total)-1] += d
		c := junitCase{Name: term(o.ID), Classname: term(orDash(o.Type)), Time: seconds(d)}
		switch {
		case o.skip != "":
			c.Skipped = &junitSkipped{Message: o.skip}
		case o.State == destroy.OutcomeDestroyed:
			if o.Forced {
				f := hookFailure("forced", o.Error, o.Hooks)
				cur.SystemErr += term(o.ID) + ": destroyed with --force after a failed destroy hook: " + f.Message + "\n" + f.Text
			}
		case o.State == destroy.OutcomeFailed:
			c.Failure = hookFailure("destroy_failed", o.Error, o.Hooks)
		case o.State == destroy.OutcomeBlocked:
			c.Skipped = &junitSkipped{Message: "blocked: must be destroyed after " + term(*o.BlockedBy) + ", which failed"}
		default:
			c.Skipped = &junitSkipped{Message: "not reached: the run was interrupted or stopped by --fail-fast"}
		}
		if c.Failure != nil {
			cur.Failures++
		}
		if c.Skipped != nil {
			cur.Skipped++
		}
		cur.Tests++
		cur.Cases = append(cur.Cases, c)
	}
	for k := range total {
		doc.Suites[k].Time = seconds(total[k])
	}
	if len(rep.Notifications) > 0 {
		cur = suite("notifications")
		var d time.Duration
		for _, n := range rep.Notifications {
			c := junitCase{Name: term(n.Subscriber) + " " + term(n.Handler) + " of " + term(n.Publisher), Classname: "objgc.notify." + term(n.Handler), Time: seconds(0)}
			var runs []applyReportRun
			if n.Hook != nil {
				runs = []applyReportRun{*n.Hook}
				c.Time = seconds(n.Hook.Duration)
				d += n.Hook.Duration
			}
			if n.Error != "" {
				c.Failure = hookFailure("notification_failed", n.Error, runs)
				cur.Failures++
			}
			cur.Tests++
			cur.Cases = append(cur.Cases, c)
		}
		cur.Time = seconds(d)
	}
	if len(rep.junit.problems) > 0 {
		cur = suite("objgc " + command)
		cur.Time = seconds(0)
		for _, pr := range rep.junit.problems {
			c := junitCase{Name: pr.code, Classname: "objgc." + command, Time: seconds(0)}
			f := &junitFailure{Type: pr.code, Message: pr.message, Text: pr.text}
			if pr.isError {
				c.Error = f
				cur.Errors++
			} else {
				c.Failure = f
				cur.Failures++
			}
			cur.Tests++
			cur.Cases = append(cur.Cases, c)
		}
	}
	if len(doc.Suites) == 0 {
		// Nothing to destroy: one passing test case says so, as a
		// report without any is an error to Jenkins' junit step.
		cur = suite("objgc " + command)
		cur.Tests = 1
		cur.Time = seconds(0)
		cur.Cases = append(cur.Cases, junitCase{Name: "nothing to destroy", Classname: "objgc." + command, Time: seconds(0)})
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n")
	return err
}

// hookFailure is the <failure> of an object or notification whose hook
// failed: the message is the error (with the exit status), the text the
// tail of stderr of each hook that wrote to it.
func hookFailure(typ, msg string, runs []applyReportRun) *junitFailure {
	f := &junitFailure{Type: typ, Message: term(msg)}
	var b strings.Builder
	for _, h := range runs {
		if h.Error == "" && h.ExitCode == 0 && h.StderrTail == "" {
			continue
		}
		line := fmt.Sprintf("%s hook %s: exit status %d", h.Event, term(h.Hook), h.ExitCode)
		if h.Error != "" {
			line = term(h.Error)
			if !strings.Contains(h.Error, "exit status") {
				line += fmt.Sprintf(" (exit status %d)", h.ExitCode)
			}
		}
		b.WriteString(line + "\n")
		if h.StderrTail != "" {
			b.WriteString("stderr (last lines):\n")
			b.WriteString(termsafe.Lines(strings.TrimRight(h.StderrTail, "\n")))
			b.WriteString("\n")
		}
	}
	f.Text = b.String()
	return f
}

// seconds formats d as decimal seconds with millisecond precision, as
// JUnit's time attributes are.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
}

// The <skipped> messages of objects that no hook ran for: planned by
// plan --junit, or left by an apply that stopped before it ran anything.
const (
	skipPlanned    = "planned: objgc plan runs no hook; apply has not run yet"
	skipNotApplied = "not destroyed: apply ran nothing (see the objgc apply test case that does not pass)"
)

// planObjects returns the doomed objects of p, one a test case, group by
// group as the plan lists them, each skipped with message skip. The ids
// and types are copied: the model they come from may be unmapped before
// the report is written.
func planObjects(p *order.Plan, skip string) []applyReportObject {
	out := make([]applyReportObject, 0, len(p.Objects))
	for _, g := range p.Groups {
		for _, i := range g.Objects {
			o := p.Header(int(i))
			out = append(out, applyReportObject{ID: strings.Clone(o.ID), Type: strings.Clone(o.Type), Group: o.Group, skip: skip})
		}
	}
	return out
}

// savedPlanObjects is planObjects of a saved plan.
func savedPlanObjects(sp *planfile.File, skip string) []applyReportObject {
	out := []applyReportObject{}
	for _, g := range sp.Groups {
		for _, o := range g.Objects {
			out = append(out, applyReportObject{ID: o.ID, Type: o.Type, Group: g.Index, skip: skip})
		}
	}
	return out
}

// refusalProblem is the failing test case of a refusal r
// (destroy.Prepared.Refusals): its code, its message, and the whole
// reason as apply prints it (the dangling references, the hooks).
func refusalProblem(r planfile.Refusal) junitProblem {
	text := r.Message
	if r.Err != nil {
		text = errorText(applyError(r.Err))
	}
	return junitProblem{code: r.Code, message: term(r.Message), text: text + "\n"}
}

// errorProblem is the test case of err, the error that ended a run: a
// <failure> typed by its code when it refuses the plan or the model (a
// refusal's code, stale_plan), else an <error> typed locked, interrupted
// or error. The message is the error's first line as stderr shows it,
// the text all of it.
func errorProblem(err error) junitProblem {
	text := errorText(applyError(err))
	msg, _, _ := strings.Cut(text, "\n")
	pr := junitProblem{message: msg, text: text + "\n"}
	var le *destroy.LockedError
	switch code := destroy.RefusalCode(err); {
	case code != "":
		pr.code = code
	case errors.Is(err, destroy.ErrStalePlan):
		pr.code = "stale_plan"
	case errors.As(err, &le):
		pr.code, pr.isError = "locked", true
	case errors.Is(err, destroy.ErrInterrupted):
		pr.code, pr.isError = "interrupted", true
	default:
		pr.code, pr.isError = "error", true
	}
	return pr
}

// failedJUnit writes apply's JUnit report when the run ends before its
// report (a refusal, a stale plan, a lock held, an error): one test case
// names why, after the objects of the plan, each skipped, when they are
// known (a saved plan's, or the inputs' once prepared). Its methods do
// nothing on a nil *failedJUnit (no --junit).
type failedJUnit struct {
	opts    *applyOptions
	ai      *applyInputs
	sp      *planfile.File
	objects []applyReportObject // of the last preparation of the inputs
	seen    *destroy.Prepared
	err     error // Run's error, before applyError rendered it
	// reported: the run's own report is being written; nothing to add.
	reported bool
}

// prepared keeps the objects of prep (destroy.RunOptions.Prepared).
func (f *failedJUnit) prepared(prep *destroy.Prepared) {
	if f == nil || prep == f.seen || f.sp != nil {
		return
	}
	f.seen = prep
	f.objects = planObjects(prep.Plan, skipNotApplied)
}

// cause records err, destroy.Run's error, whose type the test case's
// code comes from.
func (f *failedJUnit) cause(err error) {
	if f != nil {
		f.err = err
	}
}

// done says the run's own report takes over.
func (f *failedJUnit) done() {
	if f != nil {
		f.reported = true
	}
}

// write writes the report of *errp, the error apply ends with, unless
// there is none or the run's own report was written. A report that
// cannot be written is said after the error that ended the run, whose
// exit status stays.
func (f *failedJUnit) write(errp *error) {
	if f == nil || f.reported || *errp == nil {
		return
	}
	cause := *errp
	if f.err != nil {
		cause = f.err
	}
	rep := &applyReport{Target: f.ai.target, planned: f.objects}
	if f.sp != nil {
		rep.planned = savedPlanObjects(f.sp, skipNotApplied)
	}
	if rep.planned == nil {
		rep.planned = []applyReportObject{}
	}
	rep.junit.problems = []junitProblem{errorProblem(cause)}
	if err := writeJUnitFile(f.opts.JUnit, rep, f.opts.started); err != nil {
		*errp = fmt.Errorf("%w; and the JUnit report %s could not be written: %v", *errp, f.opts.JUnit, err)
	}
}

// planJUnit writes plan --junit's report when plan ends (docs/plan-format.md,
// "JUnit"): a skipped test case a doomed object, a failing one a reason
// apply would refuse, and an <error> when plan ended with an error
// before it was done. Its methods do nothing on a nil *planJUnit (no
// --junit).
type planJUnit struct {
	opts     *planOptions
	objects  []applyReportObject
	refusals []planfile.Refusal
	// complete: the plan was made and printed; an error after it is
	// --detailed-exitcode's status, which the report already says.
	complete bool
}

func newPlanJUnit(opts *planOptions) *planJUnit {
	if opts.JUnit == "" {
		return nil
	}
	return &planJUnit{opts: opts}
}

// planned keeps what plan p dooms (copied: the report is written after
// the inputs are closed) and why apply would refuse it.
func (j *planJUnit) planned(p *order.Plan, refusals []planfile.Refusal) {
	if j == nil {
		return
	}
	j.objects, j.refusals = planObjects(p, skipPlanned), refusals
}

// done says the plan was made and printed: an error after it is
// --detailed-exitcode's status, which the report says already.
func (j *planJUnit) done() {
	if j != nil {
		j.complete = true
	}
}

// write writes the report, with *errp, the error plan ends with, as an
// <error> unless the plan was complete. A report that cannot be written
// is said after the error plan ends with, whose exit status stays.
func (j *planJUnit) write(errp *error) {
	if j == nil {
		return
	}
	rep := &applyReport{planned: j.objects}
	if rep.planned == nil {
		rep.planned = []applyReportObject{}
	}
	rep.junit.command = "plan"
	rep.junit.property = junitProperty{"model", term(j.opts.Model)}
	if j.opts.Model == "" {
		rep.junit.property = junitProperty{"graph", term(j.opts.Graph)}
	}
	for _, r := range j.refusals {
		rep.junit.problems = append(rep.junit.problems, refusalProblem(r))
	}
	if *errp != nil && !j.complete {
		rep.junit.problems = append(rep.junit.problems, errorProblem(*errp))
	}
	if err := writeJUnitFile(j.opts.JUnit, rep, j.opts.started); err != nil {
		if *errp == nil {
			*errp = fmt.Errorf("writing the JUnit report %s: %w", j.opts.JUnit, err)
			return
		}
		*errp = fmt.Errorf("%w; and the JUnit report %s could not be written: %v", *errp, j.opts.JUnit, err)
	}
}
