package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// configKeys maps a flag name to its key in the configuration file and its
// environment variable, where they differ from the defaults (key = flag
// name, variable = OBJGC_ + upper-case name with '-' as '_'). DESIGN.md
// section 9 gives the precedence: flag > OBJGC_* > config file > default.
var configKeys = map[string]struct{ key, env string }{
	"hooks-dir": {"hooks.dirs", "OBJGC_HOOKS_DIR"},
	"cache-dir": {"cache.dir", "OBJGC_CACHE_DIR"},
}

func addGlobalFlags(root *cobra.Command) {
	pf := root.PersistentFlags()
	pf.String("config", "", "configuration file (default ./objgc.yaml, else <user config dir>/objgc/config.yaml)")
	pf.Bool("no-color", false, "never colour the output (NO_COLOR in the environment does the same)")
}

// newConfig builds the one viper instance of a run: every flag of c (local
// and inherited) bound to its key and OBJGC_* variable, and the
// configuration file read if there is one. Errors name the file.
func newConfig(c *cobra.Command) (*viper.Viper, error) {
	v := viper.New()
	var bindErr error
	bind := func(f *pflag.Flag) {
		key := f.Name
		if k, ok := configKeys[f.Name]; ok {
			key = k.key
		}
		if err := v.BindPFlag(key, f); err != nil && bindErr == nil {
			bindErr = err
		}
		env, ok := flagEnv(f.Name)
		if !ok {
			return
		}
		if err := v.BindEnv(key, env); err != nil && bindErr == nil {
			bindErr = err
		}
	}
	c.Flags().VisitAll(bind)
	c.InheritedFlags().VisitAll(bind)
	if bindErr != nil {
		return nil, bindErr
	}
	path, explicit := v.GetString("config"), true
	if path == "" {
		explicit = false
		path = defaultConfigFile()
	}
	if path == "" {
		return v, nil
	}
	v.SetConfigFile(path)
	if filepath.Ext(path) == "" {
		v.SetConfigType("yaml")
	}
	if err := v.ReadInConfig(); err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return v, nil
		}
		return nil, fmt.Errorf("reading configuration %s: %w", path, err)
	}
	return v, nil
}

// defaultConfigFile returns ./objgc.yaml if it exists, else the user's
// <config dir>/objgc/config.yaml if it exists, else "".
func defaultConfigFile() string {
	candidates := []string{"objgc.yaml"}
	if dir, err := os.UserConfigDir(); err == nil {
		candidates = append(candidates, filepath.Join(dir, "objgc", "config.yaml"))
	}
	for _, p := range candidates {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// splitList splits list values given as one string (an environment
// variable such as OBJGC_HOOKS_DIR=a:b) on the OS path-list separator.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, p := range filepath.SplitList(v) {
			if p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// cacheDir returns the package cache root: --cache-dir, OBJGC_CACHE_DIR,
// cache.dir in the config file, else <os.UserCacheDir()>/objgc (DESIGN.md
// section 8).
func cacheDir(v *viper.Viper) (string, error) {
	if d := v.GetString("cache.dir"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no package cache directory: %w (set --cache-dir or OBJGC_CACHE_DIR)", err)
	}
	return filepath.Join(base, "objgc"), nil
}

// flagEnv returns the OBJGC_* environment variable that sets flag name
// (DESIGN.md section 9), false for a flag with none.
func flagEnv(name string) (string, bool) {
	if name == "help" {
		return "", false
	}
	if k, ok := configKeys[name]; ok {
		return k.env, true
	}
	return "OBJGC_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")), true
}
