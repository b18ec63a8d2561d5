package cmd

import (
	"slices"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// TestSetFlags: the option fields bound to apply's flags get each setting
// by the one path through the flag: the command line first, then the
// OBJGC_* variable, then the configuration file (a list element by
// element), else the flag's default; a flag-only flag ignores the file.
func TestSetFlags(t *testing.T) {
	t.Setenv("OBJGC_APPLY_PARALLELISM", "3")
	t.Setenv("OBJGC_HOOKS_DIR", "env1:env2")
	root := &cobra.Command{Use: "objgc"}
	apply := &cobra.Command{Use: "apply", Run: func(*cobra.Command, []string) {}}
	root.AddCommand(apply)
	var o applyOptions
	o.addFlags(apply.Flags())
	if err := apply.ParseFlags([]string{"--lock-timeout", "1s"}); err != nil {
		t.Fatal(err)
	}
	fromFile := map[string]any{
		"hook-timeout": "2m",
		"lock-timeout": "5s",
		"hooks-dir":    []any{"file1", "file2"},
		"format":       "json",
		"force":        true,
	}
	if err := setFlags(apply, fromFile); err != nil {
		t.Fatal(err)
	}
	if o.Parallelism != 3 || o.HookTimeout != 2*time.Minute || o.LockTimeout != time.Second ||
		o.HookGrace != 10*time.Second || o.Format != "json" || o.Force {
		t.Errorf("parallelism %d, hook timeout %v, lock timeout %v, hook grace %v, format %q, force %v",
			o.Parallelism, o.HookTimeout, o.LockTimeout, o.HookGrace, o.Format, o.Force)
	}
	if want := []string{"env1:env2"}; !slices.Equal(o.HooksDirs, want) {
		t.Errorf("hooks dirs %q, want %q (the variable, split later by splitList)", o.HooksDirs, want)
	}
	if apply.Flags().Changed("parallelism") || apply.Flags().Changed("hook-timeout") {
		t.Error("a setting from a variable or the file marked its flag changed: settingFrom would name the command line")
	}
}
