package cmd

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/objgc/objgc/pkgcache"
)

// addCompletions registers, on every command under root, the values a
// shell completes: for a flag that takes one of a list (choices: --format,
// --on-dangling), that list, from the one place the values are checked;
// for the flags that take a duration, a size or a number, nothing (not
// file names); and for cache path and cache rm, the packages of the cache
// they would use. A completion a command registered itself is kept.
func addCompletions(root *cobra.Command, getenv func(string) string) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		register := func(f *pflag.Flag) {
			if _, ok := c.GetFlagCompletionFunc(f.Name); ok {
				return
			}
			if ch := choices(c, f.Name); ch != nil {
				_ = c.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(ch, cobra.ShellCompDirectiveNoFileComp))
				return
			}
			switch f.Value.Type() {
			case "duration", "int", "int64", "uint":
				_ = c.RegisterFlagCompletionFunc(f.Name, cobra.NoFileCompletions)
			}
			switch f.Name {
			case "unused-for", "max-size", "max-unpacked-size", "connect-timeout", "header-timeout", "idle-timeout":
				_ = c.RegisterFlagCompletionFunc(f.Name, cobra.NoFileCompletions)
			case "hooks-dir", "cache-dir":
				_ = c.MarkFlagDirname(f.Name)
			}
		}
		c.LocalFlags().VisitAll(register)
		switch commandScope(c) {
		case "cache path":
			c.ValidArgsFunction = completePackages(false, getenv)
		case "cache rm":
			c.ValidArgsFunction = completePackages(true, getenv)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completePackages completes the arguments of cache path (withVersion
// false: a FullName, then one of its versions) and cache rm (FullName and
// FullName@version) from the packages of the cache the command would use,
// with the settings it would read. It lists the cache as cache list does
// (reading, creating nothing); a cache that cannot be read completes
// nothing.
func completePackages(withVersion bool, getenv func(string) string) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		none := cobra.ShellCompDirectiveNoFileComp
		if !withVersion && len(args) >= 2 {
			return nil, none
		}
		// A completion is a run of its own (cobra's __complete command),
		// whose configuration is that of the command completed:
		// loadConfig sets its flags from their variables and the file.
		cfg, err := loadConfig(c, getenv)
		if err != nil {
			return nil, none
		}
		cacheDir, _, err := cfg.cacheDir(c.Flag("cache-dir").Value.String(), c.Flag("murano-config").Value.String())
		if err != nil {
			return nil, none
		}
		cache, err := pkgcache.OpenExisting(cacheDir)
		if err != nil {
			return nil, none
		}
		ctx := c.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		entries, err := cache.List(ctx)
		if err != nil {
			return nil, none
		}
		var out []string
		for _, e := range entries {
			switch {
			case withVersion:
				out = append(out, e.FullName, e.FullName+"@"+e.Version)
			case len(args) == 0:
				out = append(out, e.FullName)
			case e.FullName == args[0]:
				out = append(out, e.Version)
			}
		}
		slices.Sort(out)
		out = slices.Compact(out)
		var match []cobra.Completion
		for _, s := range out {
			if strings.HasPrefix(s, toComplete) {
				match = append(match, s)
			}
		}
		return match, none
	}
}
