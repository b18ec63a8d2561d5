package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/diff"
)

type applyOptions struct {
	Model       string
	Snapshot    string        `mapstructure:"snapshot"`
	Graph       string        `mapstructure:"graph"`
	Write       string        `mapstructure:"write"`
	Parallelism int           `mapstructure:"parallelism"`
	HookTimeout time.Duration `mapstructure:"hook-timeout"`
	HookGrace   time.Duration `mapstructure:"hook-grace"`
	FailFast    bool          `mapstructure:"fail-fast"`
	Force       bool          `mapstructure:"force"`
	LockTimeout time.Duration `mapstructure:"lock-timeout"`
	OnDangling  string        `mapstructure:"on-dangling"`
	Format      string        `mapstructure:"format"`
	NoColor     bool          `mapstructure:"no-color"`
	HooksDirs   []string
	CacheDir    string
	// onDanglingSet: --on-dangling was given (flag, environment or config
	// file), overriding a saved plan's.
	onDanglingSet bool
}

func newApplyCmd(streams *IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "apply [MODEL | PLANFILE]",
		Short: "Destroy the objects removed from the model by running their hooks, then write the model back",
		Long: `apply carries out the plan: it notifies subscribers, destroys the doomed objects
group by group (deepest first) by running their hook scripts, and writes the
model back: Objects with destroyed-but-referenced objects flagged, ObjectsCopy
keeping failed and blocked objects for the next run, Attributes of destroyed
objects dropped. It holds an exclusive lock on <target>.lock and journals every
step in <target>.journal, so that a run that was killed resumes where it
stopped.

MODEL is rewritten in place unless --write says otherwise; with --snapshot and
--graph, --write is required. PLANFILE is a plan saved with objgc plan --out:
apply refuses it (exit 5) if any of its inputs changed.`,
		Example: `  objgc apply env.json --hooks-dir ./hooks
  objgc apply --snapshot before.json --graph after.json --write after.json
  objgc plan env.json --out plan.json && objgc apply plan.json`,
		Args: maxArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			v, err := newConfig(c)
			if err != nil {
				return err
			}
			var opts applyOptions
			if err := v.Unmarshal(&opts); err != nil {
				return usageErrorf("%v", err)
			}
			if len(args) == 1 {
				opts.Model = args[0]
			}
			opts.HooksDirs = listSetting(v, "hooks.dirs")
			if opts.CacheDir, err = cacheDir(v); err != nil {
				return err
			}
			opts.onDanglingSet = c.Flags().Changed("on-dangling") || v.InConfig("on-dangling") || streams.Getenv("OBJGC_ON_DANGLING") != ""
			return runApply(c.Context(), streams, opts)
		},
	}
	f := c.Flags()
	addInputFlags(c)
	f.String("write", "", "write the model to `FILE` (default: rewrite MODEL in place)")
	f.StringArray("hooks-dir", nil, "look for hooks in `DIR`/<Class>/<event> (repeatable)")
	f.Int("parallelism", 1, "destroy up to `N` objects of one group at a time")
	f.Duration("hook-timeout", 10*time.Minute, "kill a hook's process group after `DURATION`")
	f.Duration("hook-grace", 10*time.Second, "after a hook times out or a second interrupt, wait `DURATION` between SIGTERM and SIGKILL of its process group")
	f.Bool("fail-fast", false, "start nothing new after the first failed destroy")
	f.Bool("force", false, "mark objects whose destroy hooks failed destroyed anyway")
	f.Duration("lock-timeout", 0, "wait up to `DURATION` for the lock on the target (0: fail at once)")
	f.String("on-dangling", "error", "references to doomed objects: error (refuse to run) or keep (destroy them and keep them flagged destroyed)")
	f.String("format", "text", "report format: text or json")
	f.String("cache-dir", "", "the package cache `DIR` (default <user cache dir>/objgc)")
	return c
}

// applyInputs names what apply reads and writes.
type applyInputs struct {
	*inputs
	target     string
	onDangling string
	planFile   string
}

// savedPlan is the part of a JSON plan apply reads.
type savedPlan struct {
	FormatVersion string      `json:"format_version"`
	Inputs        []planInput `json:"inputs"`
	OnDangling    string      `json:"on_dangling"`
}

// readSavedPlan returns the plan saved in path, or nil when path holds a
// model rather than a plan.
func readSavedPlan(path string) (*savedPlan, error) {
	if path == "-" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil // ReadDocument reports it with the model's wording
	}
	if !gjson.GetBytes(data, "format_version").Exists() || !gjson.GetBytes(data, "inputs").IsArray() {
		return nil, nil
	}
	var sp savedPlan
	if err := json.Unmarshal(data, &sp); err != nil {
		return nil, fmt.Errorf("%s: not a valid objgc plan: %w", path, err)
	}
	if sp.FormatVersion != PlanFormatVersion {
		return nil, fmt.Errorf("%s: plan format_version %q; this objgc reads %q", path, sp.FormatVersion, PlanFormatVersion)
	}
	return &sp, nil
}

// errStalePlan is the exit-5 error of a saved plan whose inputs changed.
func errStalePlan(planFile, input, was, now string) error {
	return &exitError{code: ExitStalePlan, err: fmt.Errorf("plan %s is stale: %s changed since it was planned (sha256 %s, now %s); plan again",
		planFile, input, short(was), short(now))}
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// resolveApplyInputs works out the inputs, the target and whether a saved
// plan is run, before the lock is taken; the inputs are read after it.
func resolveApplyInputs(opts *applyOptions) (*applyInputs, *savedPlan, error) {
	ai := &applyInputs{onDangling: opts.OnDangling}
	var sp *savedPlan
	if opts.Model != "" {
		var err error
		if sp, err = readSavedPlan(opts.Model); err != nil {
			return nil, nil, err
		}
	}
	if sp != nil {
		if opts.Snapshot != "" || opts.Graph != "" {
			return nil, nil, usageErrorf("a saved plan names its inputs: give PLANFILE alone, not with --snapshot or --graph")
		}
		ai.planFile = opts.Model
		switch {
		case len(sp.Inputs) == 1 && sp.Inputs[0].Role == "model":
			opts.Model = sp.Inputs[0].Path
		case len(sp.Inputs) == 2 && sp.Inputs[0].Role == "snapshot" && sp.Inputs[1].Role == "graph":
			opts.Model, opts.Snapshot, opts.Graph = "", sp.Inputs[0].Path, sp.Inputs[1].Path
		default:
			return nil, nil, fmt.Errorf("%s: a plan's inputs are one model or a snapshot and a graph", ai.planFile)
		}
		for _, in := range sp.Inputs {
			if in.Path == "<stdin>" {
				return nil, nil, fmt.Errorf("%s: planned from standard input; apply needs files", ai.planFile)
			}
		}
		if !opts.onDanglingSet {
			ai.onDangling = sp.OnDangling
		}
	}
	switch {
	case opts.Write != "":
		ai.target = opts.Write
	case opts.Model == "-":
		return nil, nil, usageErrorf("a model read from standard input needs --write FILE")
	case opts.Model != "":
		ai.target = opts.Model
	case opts.Snapshot != "" || opts.Graph != "":
		return nil, nil, usageErrorf("--snapshot and --graph need --write FILE: there is no single model to rewrite")
	}
	return ai, sp, nil
}

func runApply(ctx context.Context, streams *IO, opts applyOptions) error {
	switch opts.Format {
	case "text", "json":
	default:
		return usageErrorf("--format must be text or json, not %q", opts.Format)
	}
	if err := checkOnDangling(opts.OnDangling); err != nil {
		return err
	}
	if opts.Parallelism < 1 {
		return usageErrorf("--parallelism must be at least 1, not %d", opts.Parallelism)
	}
	if opts.Model == "" && opts.Snapshot == "" && opts.Graph == "" {
		return usageErrorf("no model given: objgc apply MODEL, objgc apply PLANFILE, or --snapshot FILE --graph FILE --write FILE")
	}
	ai, sp, err := resolveApplyInputs(&opts)
	if err != nil {
		return err
	}
	if err := checkOnDangling(ai.onDangling); err != nil {
		return err
	}
	// The first SIGINT or SIGTERM ends a wait for the lock: nothing has
	// started yet, so there is nothing to drain.
	lockCtx, cancelLock := streams.interrupted(ctx)
	unlock, err := destroy.LockTarget(lockCtx, ai.target, opts.LockTimeout)
	cancelLock()
	if err != nil {
		if errors.Is(err, destroy.ErrLocked) {
			return &exitError{code: ExitLocked, err: err}
		}
		if errors.Is(err, context.Canceled) {
			return &exitError{code: ExitInterrupted, err: fmt.Errorf("interrupted while %w; nothing was done", err)}
		}
		return err
	}
	defer unlock()

	in, err := loadInputs(streams, opts.Model, opts.Snapshot, opts.Graph)
	if err != nil {
		return err
	}
	ai.inputs = in
	if sp != nil {
		for k, d := range in.docs() {
			if d.SHA256() != sp.Inputs[k].SHA256 {
				return errStalePlan(ai.planFile, d.Name, sp.Inputs[k].SHA256, d.SHA256())
			}
		}
	}
	p := destroy.NewPlan(diff.Compare(in.Snapshot, in.Incoming))
	if n := len(p.Diff.Dangling); n > 0 && ai.onDangling == "error" {
		var b strings.Builder
		fmt.Fprintf(&b, "%d dangling %s to doomed objects; Murano's engine would refuse this model:", n, plural(n, "reference", "references"))
		for _, d := range p.Diff.Dangling {
			fmt.Fprintf(&b, "\n  %s references doomed %s at %s", orDash(d.ReferrerID), d.DoomedID, d.Path)
		}
		b.WriteString("\nremove the references, or use --on-dangling=keep to destroy the objects and keep them flagged destroyed")
		return errors.New(b.String())
	}

	var journalInputs []destroy.JournalInput
	for _, d := range in.docs() {
		journalInputs = append(journalInputs, destroy.JournalInput{Path: d.Name, SHA256: d.SHA256()})
	}
	journal, resume, err := destroy.OpenJournal(destroy.JournalPath(ai.target), journalInputs)
	if err != nil {
		return err
	}
	defer journal.Close()
	for _, note := range resume.Notes {
		fmt.Fprintf(streams.Err, "objgc: %s\n", note)
	}
	if resume.Resumed {
		fmt.Fprintf(streams.Err, "objgc: resuming the run started %s by pid %d: %d hooks done are not run again\n",
			resume.Started.Format(time.RFC3339), resume.PID, len(resume.Done))
	}
	doomedFile, err := writeDoomedFile(p)
	if err != nil {
		return err
	}
	defer os.Remove(doomedFile)

	finder := &destroy.HookFinder{Dirs: opts.HooksDirs}
	if session := openPackages(streams, opts.CacheDir); session != nil {
		defer session.Close()
		finder.Packages = session
	}
	progress := newProgressLine(streams)
	defer progress.Done()
	result, err := destroy.Apply(ctx, p, destroy.ApplyOptions{
		Finder:      finder,
		Parallelism: opts.Parallelism,
		HookTimeout: opts.HookTimeout,
		FailFast:    opts.FailFast,
		Force:       opts.Force,
		Env:         os.Environ(),
		DoomedFile:  doomedFile,
		Grace:       opts.HookGrace,
		Stderr:      progress.Println,
		Progress: func(pr destroy.Progress) {
			if pr.Group == 0 {
				progress.Update("objgc apply: notifications %d/%d", pr.NotificationsDone, pr.Notifications)
				return
			}
			progress.Update("objgc apply: group %d/%d, %d/%d objects done, %d failed", pr.Group, pr.Groups, pr.ObjectsDone, pr.Objects, pr.Failed)
		},
		Drain:   streams.Interrupt,
		Journal: journal,
		Resume:  resume,
	})
	if err != nil {
		return fmt.Errorf("apply stopped: %w; nothing was written, the journal %s keeps what was done", err, journal.Path())
	}

	attributes := envelopeAttributes(in)
	outcome := destroy.Outcome{Destroyed: result.Destroyed(), Patches: result.Patches(p)}
	target, err := filepath.Abs(ai.target)
	if err != nil {
		return err
	}
	var outputs []destroy.JournalInput
	written, err := destroy.BuildWriteBack(p, outcome, attributes, ai.onDangling == "keep")
	if err != nil {
		return err
	}
	err = writeFileCommitted(ai.target, 0o644, func(w io.Writer) error {
		return writeModel(w, in, written)
	}, func(sum string) error {
		outputs = []destroy.JournalInput{{Path: target, SHA256: sum}}
		return journal.Committing(outputs)
	})
	if err != nil {
		return err
	}
	if err := journal.Commit(outputs); err != nil {
		return err
	}
	if err := journal.Remove(); err != nil {
		return err
	}

	if err := writeApplyReport(streams, opts, ai, p, result); err != nil {
		return err
	}
	switch {
	case result.Interrupted:
		return &exitError{code: ExitInterrupted, err: errors.New("interrupted: the model was written for what completed; run apply again to finish")}
	case result.Count(destroy.OutcomeFailed)+result.Count(destroy.OutcomeBlocked)+result.Count(destroy.OutcomePending) > 0:
		return &exitError{code: ExitIncomplete}
	}
	return nil
}

// writeDoomedFile writes every doomed id, one a line, for OBJGC_DOOMED (a
// hook's isDoomed).
func writeDoomedFile(p *destroy.Plan) (string, error) {
	f, err := os.CreateTemp("", "objgc-doomed-*.txt")
	if err != nil {
		return "", fmt.Errorf("writing the doomed list: %w", err)
	}
	var b bytes.Buffer
	for _, o := range p.Objects {
		b.WriteString(o.ID)
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

// writeModel writes the model apply wrote back: the envelope, or, when the
// model file is an engine task ({"model": envelope, ...}), the task with
// the envelope in place of its model and every other byte as it was
// (docs/writeback.md).
func writeModel(w io.Writer, in *inputs, m *destroy.WrittenModel) error {
	// The reader decided the form: the trees of an engine task sit under
	// $.model (a document with Objects and a "model" key is an envelope).
	if in.Model != nil && strings.HasPrefix(in.Incoming.Path, "$.model.") {
		data := in.Model.Data
		if r := gjson.GetBytes(data, "model"); r.IsObject() && r.Index > 0 {
			lineStart := bytes.LastIndexByte(data[:r.Index], '\n') + 1
			line := data[lineStart:r.Index]
			indent := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
			if _, err := w.Write(data[:r.Index]); err != nil {
				return err
			}
			if _, err := m.WriteNested(w, string(indent)); err != nil {
				return err
			}
			_, err := w.Write(data[r.Index+len(r.Raw):])
			return err
		}
	}
	_, err := m.WriteTo(w)
	return err
}

// envelopeAttributes returns the raw Attributes of the model's envelope
// (or engine task), nil when there is none (bare trees).
func envelopeAttributes(in *inputs) json.RawMessage {
	doc := in.Model
	if doc == nil {
		doc = in.GraphFile
	}
	for _, path := range []string{"Attributes", "model.Attributes"} {
		if r := gjson.GetBytes(doc.Data, path); r.Exists() && r.IsArray() {
			return json.RawMessage(r.Raw)
		}
	}
	return nil
}

// applyReport is the JSON report of apply (docs/apply.md).
type applyReport struct {
	FormatVersion string              `json:"format_version"`
	Target        string              `json:"target"`
	Objects       []applyReportObject `json:"objects"`
	Notifications []applyReportNotify `json:"notifications"`
	Summary       applySummary        `json:"summary"`
}

type applyReportObject struct {
	ID        string           `json:"id"`
	Type      string           `json:"type"`
	Group     int              `json:"group"`
	State     string           `json:"state"`
	BlockedBy *string          `json:"blocked_by,omitempty"`
	Error     string           `json:"error,omitempty"`
	Hooks     []applyReportRun `json:"hooks"`
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
	Error      string          `json:"error,omitempty"`
}

type applySummary struct {
	Destroyed           int  `json:"destroyed"`
	Failed              int  `json:"failed"`
	Blocked             int  `json:"blocked"`
	Pending             int  `json:"pending"`
	NotificationsFailed int  `json:"notifications_failed"`
	Interrupted         bool `json:"interrupted"`
}

func newApplyReport(ai *applyInputs, p *destroy.Plan, r *destroy.ApplyResult) *applyReport {
	rep := &applyReport{FormatVersion: "1", Target: ai.target, Objects: []applyReportObject{}, Notifications: []applyReportNotify{}}
	for _, g := range p.Groups {
		for _, i := range g.Objects {
			o, res := &p.Objects[i], &r.Objects[i]
			ro := applyReportObject{ID: o.ID, Type: o.Type, Group: o.Group, State: res.Outcome, Hooks: []applyReportRun{}}
			if res.BlockedBy >= 0 {
				id := p.Objects[res.BlockedBy].ID
				ro.BlockedBy = &id
			}
			if res.Err != nil {
				ro.Error = res.Err.Error()
			}
			for _, h := range res.Hooks {
				ro.Hooks = append(ro.Hooks, applyReportRun{HookRun: h, DurationMS: h.Duration.Milliseconds()})
			}
			rep.Objects = append(rep.Objects, ro)
		}
	}
	for i, n := range p.Notifications {
		res := r.Notifications[i]
		rn := applyReportNotify{Publisher: p.Objects[n.Publisher].ID, Subscriber: n.Subscriber, Handler: n.Handler, Patch: res.Patch}
		if res.Hook != nil {
			rn.Hook = &applyReportRun{HookRun: *res.Hook, DurationMS: res.Hook.Duration.Milliseconds()}
		}
		if res.Err != nil {
			rn.Error = res.Err.Error()
			rep.Summary.NotificationsFailed++
		}
		rep.Notifications = append(rep.Notifications, rn)
	}
	rep.Summary.Destroyed = r.Count(destroy.OutcomeDestroyed)
	rep.Summary.Failed = r.Count(destroy.OutcomeFailed)
	rep.Summary.Blocked = r.Count(destroy.OutcomeBlocked)
	rep.Summary.Pending = r.Count(destroy.OutcomePending)
	rep.Summary.Interrupted = r.Interrupted
	return rep
}

func writeApplyReport(streams *IO, opts applyOptions, ai *applyInputs, p *destroy.Plan, r *destroy.ApplyResult) error {
	rep := newApplyReport(ai, p, r)
	if opts.Format == "json" {
		return writeJSON(streams.Out, rep)
	}
	pal := newPalette(streams, opts.NoColor)
	var b strings.Builder
	for _, o := range rep.Objects {
		switch o.State {
		case destroy.OutcomeDestroyed:
			fmt.Fprintf(&b, "destroyed %s %s (group %d, %d %s)\n", orDash(o.Type), pal.id(o.ID), o.Group, len(o.Hooks), plural(len(o.Hooks), "hook", "hooks"))
		case destroy.OutcomeFailed:
			fmt.Fprintf(&b, "%s %s %s: %s\n", pal.bad("failed"), orDash(o.Type), pal.id(o.ID), o.Error)
			for _, h := range o.Hooks {
				if h.StderrTail != "" {
					fmt.Fprintf(&b, "    stderr of %s:\n", h.Hook)
					for _, line := range strings.Split(strings.TrimRight(h.StderrTail, "\n"), "\n") {
						fmt.Fprintf(&b, "      %s\n", line)
					}
				}
			}
		case destroy.OutcomeBlocked:
			fmt.Fprintf(&b, "%s %s %s: must come after failed %s\n", pal.warn("blocked"), orDash(o.Type), pal.id(o.ID), *o.BlockedBy)
		default:
			fmt.Fprintf(&b, "not reached %s %s\n", orDash(o.Type), pal.id(o.ID))
		}
	}
	for _, n := range rep.Notifications {
		if n.Error != "" {
			fmt.Fprintf(&b, "%s notification %s of %s: %s\n", pal.warn("warning:"), n.Handler, n.Subscriber, n.Error)
		}
	}
	s := rep.Summary
	fmt.Fprintf(&b, "%d destroyed, %d failed, %d blocked", s.Destroyed, s.Failed, s.Blocked)
	if s.Pending > 0 {
		fmt.Fprintf(&b, ", %d not reached", s.Pending)
	}
	fmt.Fprintf(&b, "; wrote %s\n", ai.target)
	_, err := io.WriteString(streams.Out, b.String())
	return err
}
