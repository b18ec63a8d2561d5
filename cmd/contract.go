package cmd

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/objgc/objgc/destroy"
)

// stdinName is the name a document read from standard input goes by.
const stdinName = "<stdin>"

// maxDifferences is how many differences a stale-plan or --require-hooks
// message names before it says how many more there are.
const maxDifferences = destroy.MaxDifferences

func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

func absPaths(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, absPath(p))
	}
	return out
}

// settingFrom names where the setting of flag came from, for messages:
// "--FLAG" for the flag, the variable's name for the environment, "KEY in
// FILE" for a configuration file (the user's, else the system's), ""
// when the default is used. The precedence is viper's: flag, then
// variable, then the user's file, then the system's (readSettings).
func settingFrom(c *cobra.Command, v *viper.Viper, getenv func(string) string, flag string) string {
	key, env := settingOf(c, flag)
	switch {
	case c.Flags().Changed(flag):
		return "--" + flag
	case getenv(env) != "":
		return env
	case v.InConfig(key):
		return key + " in " + v.ConfigFileUsed()
	case v.IsSet(key):
		// The only defaults v holds are the system file's keys
		// (readSettings).
		return key + " in " + systemConfigFile()
	}
	return ""
}

// checkHooksDirs refuses a hooks dir that does not exist or is not a
// directory: a typo must not make every object lose its hooks. from says
// where the dirs were set (see settingFrom).
func checkHooksDirs(dirs []string, from string) error {
	for _, d := range dirs {
		st, err := os.Stat(d)
		switch {
		case os.IsNotExist(err):
			return fmt.Errorf("hooks dir %s (from %s): no such directory", d, from)
		case err != nil:
			return fmt.Errorf("hooks dir %s (from %s): %w", d, from, err)
		case !st.IsDir():
			return fmt.Errorf("hooks dir %s (from %s): not a directory", d, from)
		}
	}
	return nil
}
