package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// TestSetFlags: the option fields bound to apply's flags get each setting
// by the one path through the flag: the command line first, then the
// OBJGC_* variable, then the configuration file (a list element by
// element), else the flag's default.
func TestSetFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "objgc.yaml")
	conf := "apply:\n  hook-timeout: 2m\n  lock-timeout: 5s\n  format: json\n  parallelism: 7\nhooks:\n  dirs: [file1, file2]\n"
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"OBJGC_APPLY_PARALLELISM": "3",
		"OBJGC_HOOKS_DIR":         "env1:env2",
		"OBJGC_CONFIG":            file,
		"OBJGC_SYSTEM_CONFIG":     filepath.Join(t.TempDir(), "none.yaml"),
	}
	root := &cobra.Command{Use: "objgc"}
	var g globalOptions
	g.addFlags(root.PersistentFlags())
	apply := &cobra.Command{Use: "apply", Run: func(*cobra.Command, []string) {}}
	root.AddCommand(apply)
	var o applyOptions
	o.addFlags(apply.Flags())
	if err := apply.ParseFlags([]string{"--lock-timeout", "1s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := loadConfig(apply, func(k string) string { return env[k] }); err != nil {
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
		t.Error("a setting from a variable or the file marked its flag changed: config.from would name the command line")
	}
}
