package cmd

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/internal/termsafe"
)

// The JUnit XML of `objgc apply --junit FILE` (docs/apply.md, "JUnit
// report") follows the Apache Ant JUnit schema that Jenkins and GitLab
// read (cmd/testdata/junit.xsd): <testsuites> holds one <testsuite> a
// group, deepest first, then one for the notifications; each suite has
// <properties>, its <testcase>s, <system-out> and <system-err>; a test
// case holds at most one of <failure> and <skipped>.

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
// <skipped> saying so. Each notification is a test case of the last
// suite; a failed one is a <failure>.
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
	doc := junitSuites{}
	suite := func(name string) *junitSuite {
		doc.Suites = append(doc.Suites, junitSuite{Name: name, Package: "objgc.apply", ID: len(doc.Suites), Timestamp: stamp, Hostname: host,
			Properties: []junitProperty{{"target", term(rep.Target)}}, Cases: []junitCase{}})
		return &doc.Suites[len(doc.Suites)-1]
	}
	var cur *junitSuite
	group := -1
	var total []time.Duration
	objects := rep.Objects
	if rep.AppliedAlready {
		// A retried job: the plan was carried out by an earlier run,
		// and its objects are reported done, not left out (an empty
		// report fails Jenkins' junit step).
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
		switch o.State {
		case destroy.OutcomeDestroyed:
			if o.Forced {
				f := hookFailure("forced", o.Error, o.Hooks)
				cur.SystemErr += term(o.ID) + ": destroyed with --force after a failed destroy hook: " + f.Message + "\n" + f.Text
			}
		case destroy.OutcomeFailed:
			c.Failure = hookFailure("destroy_failed", o.Error, o.Hooks)
		case destroy.OutcomeBlocked:
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
	if len(doc.Suites) == 0 {
		// Nothing to destroy: one passing test case says so, as a
		// report without any is an error to Jenkins' junit step.
		cur = suite("objgc apply")
		cur.Tests = 1
		cur.Time = seconds(0)
		cur.Cases = append(cur.Cases, junitCase{Name: "nothing to destroy", Classname: "objgc.apply", Time: seconds(0)})
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
