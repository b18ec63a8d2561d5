package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/objgc/objgc/internal/termsafe"
	"github.com/objgc/objgc/pkgcache"
)

// newCacheCmd builds `objgc cache` and its subcommands (DESIGN.md
// section 8). The cache directory comes from --cache-dir, OBJGC_CACHE_DIR,
// the configuration key cache.dir, else <user cache dir>/objgc.
func newCacheCmd(streams *IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "cache",
		Short: "Manage the on-disk cache of Murano packages",
		Long: `cache manages the packages objgc reads class hierarchies and hooks from:
packages/<FullName>/<version>/<sha256 of the archive>/ under the cache
directory. See docs/cache.md for the layout and the lock protocol.`,
		Args: noArgs,
	}
	c.PersistentFlags().String("cache-dir", "", "the package cache `DIR` (default <user cache dir>/objgc)")
	c.AddCommand(
		newCacheAddCmd(streams),
		newCacheListCmd(streams),
		newCachePruneCmd(streams),
		newCacheVerifyCmd(streams),
		newCachePathCmd(streams),
	)
	return c
}

type cacheAddOptions struct {
	Format          string `mapstructure:"format"`
	MaxUnpackedSize string `mapstructure:"max-unpacked-size"`
	Dir             string
	Sources         []string
}

func newCacheAddCmd(streams *IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "add SRC...",
		Short: "Add packages: zip archives, package directories or http(s) URLs",
		Long: `add unpacks each SRC into the cache: a zip archive with manifest.yaml at its
root (as Murano ships packages), a package directory, or an http(s) URL of an
archive. The id of a package is the sha256 of its archive (of a canonical zip
for a directory). Adding a package removes the other ids of the same FullName
and version, unless they are in use.`,
		Example: `  objgc cache add io.murano.zip ./com.example.apache.Tomcat
  objgc cache add https://example.com/packages/com.example.WordPress.zip`,
		Args: minArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			v, err := newConfig(c)
			if err != nil {
				return err
			}
			var opts cacheAddOptions
			if err := v.Unmarshal(&opts); err != nil {
				return err
			}
			if opts.Dir, err = cacheDir(v); err != nil {
				return err
			}
			opts.Sources = args
			return runCacheAdd(c.Context(), streams, opts)
		},
	}
	c.Flags().String("format", "text", "output format: text or json")
	c.Flags().String("max-unpacked-size", "512MiB", "reject archives that expand past `SIZE` (e.g. 100MB, 2GiB)")
	return c
}

func runCacheAdd(ctx context.Context, streams *IO, opts cacheAddOptions) error {
	if err := cacheCheckFormat(opts.Format); err != nil {
		return err
	}
	limit, err := parseCacheSize(opts.MaxUnpackedSize)
	if err != nil || limit <= 0 {
		return usageErrorf("--max-unpacked-size: %q is not a size such as 500MB or 2GiB", opts.MaxUnpackedSize)
	}
	c, err := pkgcache.Open(opts.Dir)
	if err != nil {
		return err
	}
	c.MaxUnpackedSize = limit
	var results []pkgcache.AddResult
	for _, src := range opts.Sources {
		res, err := c.Add(ctx, src)
		if err != nil {
			if errors.Is(err, pkgcache.ErrLocked) {
				return &exitError{code: ExitLocked, err: err}
			}
			return err
		}
		res.Entry.InUse = false // only by this add, which is over
		results = append(results, res)
		if opts.Format == "text" {
			verb := "added"
			if !res.Installed {
				verb = "already cached"
			}
			e := res.Entry
			fmt.Fprintf(streams.Out, "%s %s %s %s\n", verb, term(e.FullName), term(e.Version), term(e.ID))
			for _, id := range res.RemovedIDs {
				fmt.Fprintf(streams.Out, "removed outdated id %s\n", term(id))
			}
			for _, id := range res.KeptIDs {
				fmt.Fprintf(streams.Out, "kept outdated id %s: in use\n", term(id))
			}
		}
	}
	if opts.Format == "json" {
		return cacheWriteJSON(streams, map[string]any{"added": results})
	}
	return nil
}

type cacheListOptions struct {
	Format string `mapstructure:"format"`
	Dir    string
}

func newCacheListCmd(streams *IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "list",
		Short: "List cached packages: FullName, version, id, size, last use, in use",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			v, err := newConfig(c)
			if err != nil {
				return err
			}
			var opts cacheListOptions
			if err := v.Unmarshal(&opts); err != nil {
				return err
			}
			if opts.Dir, err = cacheDir(v); err != nil {
				return err
			}
			return runCacheList(c.Context(), streams, opts)
		},
	}
	c.Flags().String("format", "text", "output format: text or json")
	return c
}

func runCacheList(ctx context.Context, streams *IO, opts cacheListOptions) error {
	if err := cacheCheckFormat(opts.Format); err != nil {
		return err
	}
	c, err := pkgcache.Open(opts.Dir)
	if err != nil {
		return err
	}
	entries, err := c.List(ctx)
	if err != nil {
		return err
	}
	if opts.Format == "json" {
		if entries == nil {
			entries = []pkgcache.Entry{}
		}
		return cacheWriteJSON(streams, map[string]any{"cache_dir": c.Root(), "packages": entries})
	}
	if len(entries) == 0 {
		fmt.Fprintf(streams.Out, "no packages in %s\n", term(c.Root()))
		return nil
	}
	tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FULLNAME\tVERSION\tID\tSIZE\tLAST USE\tIN USE")
	for _, e := range entries {
		last := "never"
		if !e.LastUse.IsZero() {
			last = e.LastUse.Local().Format("2006-01-02 15:04")
		}
		inUse := "no"
		if e.InUse {
			inUse = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", term(e.FullName), term(e.Version), term(e.ID[:12]), formatCacheSize(e.Size), last, inUse)
	}
	return tw.Flush()
}

type cachePruneOptions struct {
	Format    string `mapstructure:"format"`
	Outdated  bool   `mapstructure:"outdated"`
	Keep      int    `mapstructure:"keep"`
	UnusedFor string `mapstructure:"unused-for"`
	MaxSize   string `mapstructure:"max-size"`
	DryRun    bool   `mapstructure:"dry-run"`
	Verbose   bool   `mapstructure:"verbose"`
	Dir       string
}

func newCachePruneCmd(streams *IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "prune",
		Short: "Remove outdated, unused or least recently used packages",
		Long: `prune removes packages chosen by one or more policies:
  --outdated         versions older than the --keep newest per FullName, and
                     outdated ids (re-uploaded packages) of the versions kept
  --unused-for D     packages not used for D (e.g. 720h, 30d)
  --max-size S       least recently used packages until the cache holds at
                     most S (e.g. 500MB, 2GiB)
Packages in use (a plan or apply holds their usage lock) are skipped and
reported. Only one prune runs at a time: a second one says so and exits 4.
It prints nothing unless something was removed, for cron, or with --verbose.`,
		Example: `  objgc cache prune --outdated --keep 2
  objgc cache prune --unused-for 30d --max-size 2GiB --dry-run`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			v, err := newConfig(c)
			if err != nil {
				return err
			}
			var opts cachePruneOptions
			if err := v.Unmarshal(&opts); err != nil {
				return err
			}
			if opts.Dir, err = cacheDir(v); err != nil {
				return err
			}
			return runCachePrune(c.Context(), streams, opts)
		},
	}
	f := c.Flags()
	f.String("format", "text", "output format: text or json")
	f.Bool("outdated", false, "remove older versions beyond --keep per FullName, and outdated ids")
	f.Int("keep", 1, "versions to keep per FullName with --outdated")
	f.String("unused-for", "", "remove packages not used for `DURATION` (e.g. 720h, 30d)")
	f.String("max-size", "", "remove least recently used packages until the cache holds at most `SIZE` (e.g. 500MB, 2GiB)")
	f.Bool("dry-run", false, "print what would be removed, remove nothing")
	f.Bool("verbose", false, "print a summary even when nothing was removed")
	return c
}

func runCachePrune(ctx context.Context, streams *IO, opts cachePruneOptions) error {
	if err := cacheCheckFormat(opts.Format); err != nil {
		return err
	}
	popts := pkgcache.PruneOptions{Outdated: opts.Outdated, Keep: opts.Keep, DryRun: opts.DryRun}
	if opts.Keep < 1 {
		return usageErrorf("--keep must be at least 1, not %d", opts.Keep)
	}
	if opts.UnusedFor != "" {
		d, err := parseCacheDuration(opts.UnusedFor)
		if err != nil || d <= 0 {
			return usageErrorf("--unused-for: %q is not a duration such as 720h or 30d", opts.UnusedFor)
		}
		popts.UnusedFor = d
	}
	if opts.MaxSize != "" {
		n, err := parseCacheSize(opts.MaxSize)
		if err != nil {
			return usageErrorf("--max-size: %q is not a size such as 500MB or 2GiB", opts.MaxSize)
		}
		popts.LimitSize, popts.MaxSize = true, n
	}
	if !popts.Outdated && popts.UnusedFor == 0 && !popts.LimitSize {
		return usageErrorf("cache prune needs a policy: --outdated, --unused-for or --max-size")
	}
	c, err := pkgcache.Open(opts.Dir)
	if err != nil {
		return err
	}
	progress := newProgressLine(streams)
	popts.Progress = func(done, total int) {
		if done == total {
			progress.Update("objgc cache prune: %d/%d packages claimed, deleting the last ones", done, total)
			return
		}
		progress.Update("objgc cache prune: %d/%d packages claimed", done, total)
	}
	res, err := c.Prune(ctx, popts)
	progress.Done()
	if errors.Is(err, pkgcache.ErrPruneRunning) {
		return &exitError{code: ExitLocked, err: fmt.Errorf("cache prune: %w in %s; nothing was touched", err, c.Root())}
	}
	if err != nil {
		return err
	}
	if opts.Format == "json" {
		if res.Removed == nil {
			res.Removed = []pkgcache.Removal{}
		}
		if res.InUse == nil {
			res.InUse = []pkgcache.Removal{}
		}
		return cacheWriteJSON(streams, res)
	}
	if len(res.Removed) == 0 && len(res.InUse) == 0 && res.Leftovers == 0 && !opts.Verbose {
		return nil // cron: quiet when nothing was done
	}
	verb, freed := "removed", "freed"
	if res.DryRun {
		verb, freed = "would remove", "would free"
	}
	for _, r := range res.Removed {
		fmt.Fprintf(streams.Out, "%s %s %s %s (%s, %s)\n", verb, term(r.FullName), term(r.Version), term(r.ID[:12]), formatCacheSize(r.Size), term(r.Reason))
	}
	for _, r := range res.InUse {
		fmt.Fprintf(streams.Out, "skipped %s %s %s: in use (%s)\n", term(r.FullName), term(r.Version), term(r.ID[:12]), term(r.Reason))
	}
	fmt.Fprintf(streams.Out, "%s %s in %d package%s", freed, formatCacheSize(res.Freed), len(res.Removed), cachePlural(len(res.Removed)))
	if len(res.InUse) > 0 {
		fmt.Fprintf(streams.Out, ", %d skipped in use", len(res.InUse))
	}
	if res.Leftovers > 0 {
		fmt.Fprintf(streams.Out, ", %d leftover%s of interrupted runs cleaned", res.Leftovers, cachePlural(res.Leftovers))
	}
	fmt.Fprintln(streams.Out)
	return nil
}

type cacheVerifyOptions struct {
	Format string `mapstructure:"format"`
	Dir    string
}

func newCacheVerifyCmd(streams *IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "verify",
		Short: "Check that every cached package is complete and unchanged since it was unpacked",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			v, err := newConfig(c)
			if err != nil {
				return err
			}
			var opts cacheVerifyOptions
			if err := v.Unmarshal(&opts); err != nil {
				return err
			}
			if opts.Dir, err = cacheDir(v); err != nil {
				return err
			}
			return runCacheVerify(c.Context(), streams, opts)
		},
	}
	c.Flags().String("format", "text", "output format: text or json")
	return c
}

func runCacheVerify(ctx context.Context, streams *IO, opts cacheVerifyOptions) error {
	if err := cacheCheckFormat(opts.Format); err != nil {
		return err
	}
	c, err := pkgcache.Open(opts.Dir)
	if err != nil {
		return err
	}
	res, err := c.Verify(ctx)
	if err != nil {
		return err
	}
	if opts.Format == "json" {
		if res.Problems == nil {
			res.Problems = []pkgcache.Problem{}
		}
		if err := cacheWriteJSON(streams, res); err != nil {
			return err
		}
	} else {
		for _, p := range res.Problems {
			fmt.Fprintf(streams.Out, "%s: %s\n", term(p.Path), term(p.Problem))
		}
		if len(res.Problems) == 0 {
			fmt.Fprintf(streams.Out, "%d package%s verified\n", res.Checked, cachePlural(res.Checked))
		}
	}
	if len(res.Problems) > 0 {
		return fmt.Errorf("cache verify: %d problem%s in %s", len(res.Problems), cachePlural(len(res.Problems)), c.Root())
	}
	return nil
}

type cachePathOptions struct {
	Format   string `mapstructure:"format"`
	Dir      string
	FullName string
	Version  string
}

func newCachePathCmd(streams *IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "path FULLNAME [VERSION]",
		Short: "Print the directory of a cached package (its highest version by default)",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			v, err := newConfig(c)
			if err != nil {
				return err
			}
			var opts cachePathOptions
			if err := v.Unmarshal(&opts); err != nil {
				return err
			}
			if opts.Dir, err = cacheDir(v); err != nil {
				return err
			}
			opts.FullName = args[0]
			if len(args) == 2 {
				opts.Version = args[1]
			}
			return runCachePath(streams, opts)
		},
	}
	c.Flags().String("format", "text", "output format: text or json")
	return c
}

func runCachePath(streams *IO, opts cachePathOptions) error {
	if err := cacheCheckFormat(opts.Format); err != nil {
		return err
	}
	c, err := pkgcache.Open(opts.Dir)
	if err != nil {
		return err
	}
	p, err := c.Path(opts.FullName, opts.Version)
	if err != nil {
		return err
	}
	if opts.Format == "json" {
		return cacheWriteJSON(streams, map[string]string{"full_name": opts.FullName, "version": opts.Version, "path": p})
	}
	fmt.Fprintln(streams.Out, term(p))
	return nil
}

func cacheCheckFormat(f string) error {
	if f != "text" && f != "json" {
		return usageErrorf("--format must be text or json, not %q", f)
	}
	return nil
}

func cacheWriteJSON(streams *IO, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := streams.Out.Write(termsafe.JSON(b.Bytes()))
	return err
}

func cachePlural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// cacheSizeUnits are the units parseSize accepts: SI (kB = 1000) and IEC
// (KiB = 1024), case-insensitive.
var cacheSizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// parseCacheSize reads a byte count: "1048576", "500MB" (10^6), "2GiB" (2^30),
// "1.5G" (2^30, as du and docker read it).
func parseCacheSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range cacheSizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || f*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	return int64(f * float64(mult)), nil
}

// parseCacheDuration is time.ParseDuration plus days: "30d", "1d12h".
func parseCacheDuration(s string) (time.Duration, error) {
	if days, rest, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration", s)
		}
		d := time.Duration(n) * 24 * time.Hour
		if rest == "" {
			return d, nil
		}
		r, err := time.ParseDuration(rest)
		return d + r, err
	}
	return time.ParseDuration(s)
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
