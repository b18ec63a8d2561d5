package cmd

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/objgc/objgc/destroy/hook"
)

// testVariablePrefix starts the variables objgc's own tests give the
// binary and the hook scripts they run (OBJGC_TEST_STATE): not settings.
const testVariablePrefix = "OBJGC_TEST_"

// testVariables are the other variables objgc's tests read
// (docs/testing.md); a test run with one set runs objgc, which must not
// warn about it.
var testVariables = []string{"OBJGC_STRESS", "OBJGC_STRESS_SEED", "OBJGC_ENGINE_STRESS", "OBJGC_BENCH_DIR"}

// warnUnknownVariables writes one warning line to w for each OBJGC_*
// variable in environ that sets nothing: a misspelled setting would
// otherwise be ignored without a word, where a misspelled key of the
// configuration file is an error. It is a warning, not an error: a
// variable left in a shell or a CI job must not stop a run it never
// meant to change. Not warned about (docs/config.md): the variables of
// every command's settings, the flag-only ones, the unscoped names of
// c's own settings and the names of c's shared settings scoped to c
// (config.load refuses those), the variables objgc gives
// the hooks it runs (a hook may run objgc), those of objgc's tests
// (OBJGC_TEST_*, testVariables), OBJGC_SYSTEM_CONFIG (it names a file,
// as OBJGC_CONFIG does) and empty
// variables (unset, as for the settings). Names are
// sorted; a name is shown as termsafe shows it.
func warnUnknownVariables(w io.Writer, c *cobra.Command, environ []string) {
	known := map[string]bool{}
	for _, v := range slices.Concat(hook.Variables, testVariables, []string{systemConfigEnv}) {
		known[v] = true
	}
	var settings []string
	var walk func(*cobra.Command)
	walk = func(sub *cobra.Command) {
		add := func(f *pflag.Flag) {
			if f.Name == "help" || f.Name == "version" {
				return
			}
			_, env := settingOf(sub, f.Name)
			if !known[env] {
				known[env] = true
				if !flagOnly[f.Name] {
					settings = append(settings, env)
				}
			}
		}
		sub.Flags().VisitAll(add)
		sub.PersistentFlags().VisitAll(add)
		for _, s := range sub.Commands() {
			walk(s)
		}
	}
	walk(c.Root())
	own := func(f *pflag.Flag) {
		known[envName(f.Name)] = true
		if sharedSettings[f.Name] {
			known[scopedEnv(c, f.Name)] = true
		}
	}
	c.Flags().VisitAll(own)
	c.InheritedFlags().VisitAll(own)
	slices.Sort(settings)

	var unknown []string
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if val != "" && strings.HasPrefix(name, "OBJGC_") && !known[name] && !strings.HasPrefix(name, testVariablePrefix) {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for _, name := range slices.Compact(unknown) {
		msg := fmt.Sprintf("objgc: warning: %s is not a setting; it is ignored", term(name))
		if sug := suggestVariable(name, settings); len(sug) > 0 {
			msg += fmt.Sprintf(" (did you mean %s?)", orList(sug))
		}
		fmt.Fprintln(w, msg)
	}
}

// suggestVariable returns the setting variables closest to name: those
// at most two edits away and at most one edit in three bytes of the name
// after OBJGC_ (as suggestKey does for keys), else those that end in
// name's rest (OBJGC_PARALLELISM: OBJGC_APPLY_PARALLELISM); none when
// nothing is close.
func suggestVariable(name string, settings []string) []string {
	rest := strings.TrimPrefix(name, "OBJGC_")
	best, bestDist := []string(nil), 3
	for _, s := range settings {
		d := editDistance(rest, strings.TrimPrefix(s, "OBJGC_"))
		if 3*d > len(rest) {
			continue
		}
		switch {
		case d < bestDist:
			best, bestDist = []string{s}, d
		case d == bestDist:
			best = append(best, s)
		}
	}
	if best != nil {
		return best
	}
	for _, s := range settings {
		if strings.HasSuffix(s, "_"+rest) {
			best = append(best, s)
		}
	}
	return best
}
