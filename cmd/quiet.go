package cmd

import (
	"fmt"
	"strings"
)

// apply --quiet prints errors and warnings only, for cron and CI logs: no
// progress line, no hook stderr as it comes (a failed hook's tail is in
// the report), no "resuming" line, and in the text report only failed,
// blocked, not reached and forced objects, objects destroyed without a
// destroy hook, failed notifications, and then the summary; nothing at
// all when every object was destroyed by its hooks. Errors, resume notes
// and the JSON report (--format json) are as without it. --verbose adds
// each hook run (exit status, duration) and each notification that went
// well to the text report. docs/apply.md, "The report".

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
