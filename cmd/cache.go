package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/pkgcache"
)

// newCacheCmd builds `objgc cache` and its subcommands (docs/design.md, "The
// package cache"). The cache directory comes from --cache-dir,
// OBJGC_CACHE_DIR, the configuration key cache.dir, else <user cache
// dir>/objgc.
func newCacheCmd(streams *IO, cfg *config) *cobra.Command {
	c := &cobra.Command{
		Use:   "cache",
		Short: "Manage the on-disk cache of Murano packages",
		Long: `cache manages the packages objgc reads class hierarchies and hooks from: the
package cache of murano-engine, <FullName>/<version>/<id>/ under the cache
directory, with the engine's <id>_usage.lock and <id>_download.lock beside
and objgc's own records in .objgc/. Packages the engine unpacked and
packages added with 'objgc cache add' are listed, verified and pruned
alike; see docs/cache.md for the layout and the lock protocol.`,
		Args: noArgs,
	}
	dir, muranoConfig := new(string), new(string)
	addCacheFlags(c.PersistentFlags(), dir, muranoConfig)
	for _, sub := range []cacheSubcommand{
		newCacheAddCmd(streams),
		newCacheListCmd(streams),
		newCachePruneCmd(streams),
		newCacheVerifyCmd(streams),
		newCachePathCmd(streams),
		newCacheMigrateCmd(streams),
		newCacheRmCmd(streams),
	} {
		c.AddCommand(sub.build(cfg, dir, muranoConfig))
	}
	return c
}

// cacheSubcommand is one cache subcommand: its help, the flags of its
// own, and what it does. Every cache subcommand has the same shape,
// which build gives it: --format (text or json) and --quiet beside its
// own flags; the package cache resolved (config.cacheDir) and --format checked
// before run is called with the cache directory.
type cacheSubcommand struct {
	cmd *cobra.Command // Use, Short, Long, Example, Args
	out *cacheOutput
	// quiet says what --quiet leaves out of the text output.
	quiet string
	// flags, when not nil, declares the subcommand's own flags.
	flags func(*pflag.FlagSet)
	// run does the work, with the options bound to the flags, which
	// then hold the resolved settings.
	run func(ctx context.Context, cacheDir string, args []string) error
	// beforeBecome, when not nil, opens what the command reads outside
	// the cache while the process still has root's rights, when it is
	// about to become the cache's owner (pkgcache.OwnerToBecome).
	beforeBecome func(ctx context.Context, args []string)
}

// cacheOutput are the settings every cache subcommand has. With
// --quiet, the text output holds only errors and warnings, for cron and
// CI logs; the JSON output (--format json) is the same with it.
type cacheOutput struct {
	Format string
	Quiet  bool
}

func (s cacheSubcommand) build(cfg *config, dir, muranoConfig *string) *cobra.Command {
	c := s.cmd
	f := c.Flags()
	f.StringVar(&s.out.Format, "format", "text", "output format: text or json")
	f.BoolVarP(&s.out.Quiet, "quiet", "q", false, s.quiet)
	if s.flags != nil {
		s.flags(f)
	}
	c.RunE = func(c *cobra.Command, args []string) error {
		cache, _, err := cfg.cacheDir(*dir, *muranoConfig)
		if err != nil {
			return err
		}
		if f := s.out.Format; f != "text" && f != "json" {
			return usageErrorf("--format must be text or json, not %q", f)
		}
		// Root does a cache's work as the cache's owner, before it
		// opens anything under the root (docs/cache.md, "Owners").
		owner, err := pkgcache.OwnerToBecome(cache)
		if err != nil {
			return err
		}
		if owner != nil {
			if s.beforeBecome != nil {
				s.beforeBecome(c.Context(), args)
			}
			if err := owner.Become(); err != nil {
				return err
			}
		}
		return s.run(c.Context(), cache, args)
	}
	return c
}

// cachePackageJSON is a cached package in the JSON of every cache
// command (docs/cache.md). LastUse is null for a package never used.
type cachePackageJSON struct {
	FullName  string     `json:"full_name"`
	Version   string     `json:"version"`
	ID        string     `json:"id"`
	Dir       string     `json:"dir"`
	Size      int64      `json:"size"`
	Installed time.Time  `json:"installed"`
	LastUse   *time.Time `json:"last_use"`
	// PruneLastUse is the later of LastUse and Installed: the time prune's
	// --unused-for and --max-size count from.
	PruneLastUse time.Time `json:"prune_last_use"`
	InUse        bool      `json:"in_use"`
	// InstalledBy is "objgc" (cache add) or "engine" (murano-engine
	// unpacked it: no digests are recorded, and its hooks do not run
	// unless engine packages are trusted).
	InstalledBy string `json:"installed_by"`
	// InUseReason says why a package is in use when it is not that its
	// usage lock is held (an orphaned lock; a missing lock file where
	// /proc cannot be read).
	InUseReason string `json:"in_use_reason,omitempty"`
}

// packagesJSON is packageJSON of each of es; [] for none.
func packagesJSON(es []pkgcache.Entry) []cachePackageJSON {
	out := make([]cachePackageJSON, len(es))
	for i, e := range es {
		out[i] = packageJSON(e)
	}
	return out
}

func packageJSON(e pkgcache.Entry) cachePackageJSON {
	p := cachePackageJSON{FullName: e.FullName, Version: e.Version, ID: e.ID, Dir: e.Dir, Size: e.Size, Installed: e.Installed,
		PruneLastUse: e.UnusedSince(), InUse: e.InUse, InstalledBy: e.InstalledBy, InUseReason: e.InUseReason}
	if !e.LastUse.IsZero() {
		t := e.LastUse
		p.LastUse = &t
	}
	return p
}

// shortID is the first 12 characters of a package id, enough to tell the
// ids of one cache apart (objgc's are sha256, the catalog's uuids).
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// cacheInterrupted marks the error of a cache command stopped by SIGINT or
// SIGTERM as destroy.ErrInterrupted, which exitCode maps to 130. Nothing
// is half-installed then: a package is renamed into place whole or not at
// all.
func cacheInterrupted(what string, err error) error {
	return fmt.Errorf("%s: %w: %w", what, destroy.ErrInterrupted, err)
}

// formatCacheSize prints bytes in IEC units.
func formatCacheSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
}

// checkQuietVerbose refuses --quiet with --verbose, as apply does.
func checkQuietVerbose(quiet, verbose bool) error {
	if quiet && verbose {
		return usageErrorf("--quiet and --verbose contradict each other; give one")
	}
	return nil
}
