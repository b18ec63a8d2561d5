package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
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
func newCacheCmd(streams *IO) *cobra.Command {
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
	dir := new(string)
	c.PersistentFlags().StringVar(dir, "cache-dir", "", "the package cache `DIR` (default <user cache dir>/objgc)")
	c.PersistentFlags().String("murano-config", "", "read the package cache directory from murano-engine's `FILE` ([engine] packages_cache; not with --cache-dir)")
	c.AddCommand(
		newCacheAddCmd(streams, dir),
		newCacheListCmd(streams, dir),
		newCachePruneCmd(streams, dir),
		newCacheVerifyCmd(streams, dir),
		newCachePathCmd(streams, dir),
		newCacheMigrateCmd(streams, dir),
		newCacheRmCmd(streams, dir),
	)
	return c
}

type cacheAddOptions struct {
	Format          string
	MaxUnpackedSize string
	MaxEntries      int
	ConnectTimeout  string
	HeaderTimeout   string
	IdleTimeout     string
	Force           bool
	Quiet           bool
	Verbose         bool
	Dir             string
	Sources         []string
}

// addFlags declares cache add's flags, each bound to its field of o.
func (o *cacheAddOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Format, "format", "text", "output format: text or json")
	f.StringVar(&o.MaxUnpackedSize, "max-unpacked-size", "512MiB", "reject archives larger than `SIZE` or that expand past it (e.g. 100MB, 2GiB)")
	f.IntVar(&o.MaxEntries, "max-entries", pkgcache.DefaultMaxEntries, "reject archives of more than `N` entries (files, directories, links)")
	f.StringVar(&o.ConnectTimeout, "connect-timeout", pkgcache.DefaultConnectTimeout.String(), "give up a download when connecting takes longer than `DURATION`")
	f.StringVar(&o.HeaderTimeout, "header-timeout", pkgcache.DefaultHeaderTimeout.String(), "give up a download when the response headers take longer than `DURATION`")
	f.StringVar(&o.IdleTimeout, "idle-timeout", pkgcache.DefaultIdleTimeout.String(), "give up a download when no data arrives for `DURATION`")
	f.BoolVar(&o.Force, "force", false, "unpack again and replace a package already cached (repairs a damaged one)")
	cacheQuietFlag(f, &o.Quiet, "print only errors and warnings (ids kept in use), not what was added")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "print each package's directory and size too")
}

func newCacheAddCmd(streams *IO, dir *string) *cobra.Command {
	o := &cacheAddOptions{}
	c := &cobra.Command{
		Use:   "add SRC...",
		Short: "Add packages: zip archives, package directories or http(s) URLs",
		Long: `add unpacks each SRC into the cache: a zip archive with manifest.yaml at its
root (as Murano ships packages), a package directory, or an http(s) URL of an
archive. The id of a package is the sha256 of its archive (of a canonical zip
for a directory). Adding a package removes the other ids of the same FullName
and version (the engine's included), unless they are in use.

Every SRC is tried: the good ones are added, each bad one is reported on
stderr, and the exit status is 1 if any failed (3 if the only failures were
packages in use, 4 if they were packages in use or locks not taken in time).

--force unpacks a package again even when its id is cached, replacing the
cached copy: the way to repair a package that 'objgc cache verify' reports
as damaged. It refuses (exit 3, in use) while a plan or apply uses the
package.

A download gives up when connecting takes longer than --connect-timeout,
when the server sends no response headers within --header-timeout, or when
no byte of the body arrives for --idle-timeout. An archive may not be larger
than --max-unpacked-size, nor expand past it, nor hold more than
--max-entries entries.`,
		Example: `  objgc cache add io.murano.zip ./com.example.apache.Tomcat
  objgc cache add https://example.com/packages/com.example.WordPress.zip
  objgc cache add --force io.murano.zip`,
		Args: minArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cache, err := cacheSettings(c, dir)
			if err != nil {
				return err
			}
			opts := *o
			opts.Dir = cache
			opts.Sources = args
			return runCacheAdd(c.Context(), streams, opts)
		},
	}
	o.addFlags(c.Flags())
	return c
}

// cacheAddFailure is one source `cache add` could not add.
type cacheAddFailure struct {
	Source string `json:"source"`
	Error  string `json:"error"`
}

// cacheAddJSON is what `cache add --format json` prints.
type cacheAddJSON struct {
	Added  []cacheAddedJSON  `json:"added"`
	Failed []cacheAddFailure `json:"failed"`
}

type cacheAddedJSON struct {
	Source     string           `json:"source"`
	Package    cachePackageJSON `json:"package"`
	Unpacked   bool             `json:"unpacked"`
	Replaced   bool             `json:"replaced"`
	RemovedIDs []string         `json:"removed_ids"`
	KeptIDs    []string         `json:"kept_ids"`
}

func runCacheAdd(ctx context.Context, streams *IO, opts cacheAddOptions) error {
	if err := cacheCheckFormat(opts.Format); err != nil {
		return err
	}
	if err := checkQuietVerbose(opts.Quiet, opts.Verbose); err != nil {
		return err
	}
	limit, err := parseCacheSize(opts.MaxUnpackedSize)
	if err != nil || limit <= 0 {
		return usageErrorf("--max-unpacked-size: %q is not a size such as 500MB or 2GiB", opts.MaxUnpackedSize)
	}
	if opts.MaxEntries < 1 {
		return usageErrorf("--max-entries must be at least 1, not %d", opts.MaxEntries)
	}
	var timeouts [3]time.Duration
	for i, t := range []struct{ flag, value string }{
		{"connect-timeout", opts.ConnectTimeout}, {"header-timeout", opts.HeaderTimeout}, {"idle-timeout", opts.IdleTimeout},
	} {
		d, err := parseCacheDuration(t.value)
		if err != nil || d <= 0 {
			return usageErrorf("--%s: %q is not a duration such as 30s or 2m", t.flag, t.value)
		}
		timeouts[i] = d
	}
	ctx, cancel := streams.interrupted(ctx)
	defer cancel()
	c, err := pkgcache.Open(opts.Dir)
	if err != nil {
		return err
	}
	c.MaxUnpackedSize, c.MaxEntries = limit, opts.MaxEntries
	c.ConnectTimeout, c.HeaderTimeout, c.IdleTimeout = timeouts[0], timeouts[1], timeouts[2]
	out := cacheAddJSON{Added: []cacheAddedJSON{}, Failed: []cacheAddFailure{}}
	locked, inUse := 0, 0
	for _, src := range opts.Sources {
		add := c.Add
		if opts.Force {
			add = c.Reinstall
		}
		res, err := add(ctx, src)
		if err != nil {
			if ctx.Err() != nil {
				return cacheInterrupted("cache add", err)
			}
			switch {
			case errors.Is(err, pkgcache.ErrInUse):
				inUse++
			case errors.Is(err, pkgcache.ErrLocked):
				locked++
			}
			out.Failed = append(out.Failed, cacheAddFailure{Source: src, Error: err.Error()})
			fmt.Fprintf(streams.Err, "objgc: %s\n", errorText(err))
			continue
		}
		res.Entry.InUse = false // only by this add, which is over
		out.Added = append(out.Added, cacheAddedJSON{
			Source: src, Package: packageJSON(res.Entry), Unpacked: res.Installed, Replaced: res.Replaced,
			RemovedIDs: orEmpty(res.RemovedIDs), KeptIDs: orEmpty(res.KeptIDs),
		})
		if opts.Format == "text" {
			verb := "added"
			switch {
			case res.Replaced:
				verb = "replaced"
			case !res.Installed:
				verb = "already cached"
			}
			e := res.Entry
			if !opts.Quiet {
				fmt.Fprintf(streams.Out, "%s %s %s %s\n", verb, term(e.FullName), term(e.Version), term(e.ID))
				if opts.Verbose {
					fmt.Fprintf(streams.Out, "    in %s (%s)\n", term(e.Dir), formatCacheSize(e.Size))
				}
				for _, id := range res.RemovedIDs {
					fmt.Fprintf(streams.Out, "removed outdated id %s\n", term(id))
				}
			}
			for _, id := range res.KeptIDs {
				fmt.Fprintf(streams.Out, "kept outdated id %s: in use\n", term(id))
			}
		}
	}
	if opts.Format == "json" {
		if err := writeJSON(streams.Out, out); err != nil {
			return err
		}
	}
	if n := len(out.Failed); n > 0 {
		// In use is 3 as for every cache command; a lock not taken in
		// time is 4 and outranks it (waiting longer may help with both).
		code := ExitError
		switch {
		case inUse == n:
			code = ExitIncomplete
		case inUse+locked == n:
			code = ExitLocked
		}
		return &exitError{code: code, err: fmt.Errorf("cache add: %d of %d %s not added", n, len(opts.Sources), plural(len(opts.Sources), "source", "sources"))}
	}
	return nil
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
	InUse     bool       `json:"in_use"`
	// InstalledBy is "objgc" (cache add) or "engine" (murano-engine
	// unpacked it: no digests are recorded, and its hooks do not run
	// unless engine packages are trusted).
	InstalledBy string `json:"installed_by"`
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
	p := cachePackageJSON{FullName: e.FullName, Version: e.Version, ID: e.ID, Dir: e.Dir, Size: e.Size, Installed: e.Installed, InUse: e.InUse, InstalledBy: e.InstalledBy}
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

// cacheSettings sets the flags of cache subcommand c that the command
// line left unchanged from OBJGC_* variables and the configuration file
// (newConfig), and so the option fields bound to them, and returns the
// package cache directory: *dir, the --cache-dir setting, the cache of
// --murano-config, or the default (resolveCacheDir). The caller copies its
// options after it.
func cacheSettings(c *cobra.Command, dir *string) (string, error) {
	v, err := newConfig(c)
	if err != nil {
		return "", err
	}
	return cacheCmdDir(c, v, *dir)
}

type cacheListOptions struct {
	Format  string
	Quiet   bool
	Verbose bool
	Dir     string
}

// addFlags declares cache list's flags, each bound to its field of o.
func (o *cacheListOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Format, "format", "text", "output format: text or json")
	cacheQuietFlag(f, &o.Quiet, "print only errors: nothing when the cache can be read (exit status 0), for a check")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "print whole ids and each package's directory")
}

func newCacheListCmd(streams *IO, dir *string) *cobra.Command {
	o := &cacheListOptions{}
	c := &cobra.Command{
		Use:   "list",
		Short: "List cached packages: FullName, version, id, size, last use, in use",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cache, err := cacheSettings(c, dir)
			if err != nil {
				return err
			}
			opts := *o
			opts.Dir = cache
			return runCacheList(c.Context(), streams, opts)
		},
	}
	o.addFlags(c.Flags())
	return c
}

func runCacheList(ctx context.Context, streams *IO, opts cacheListOptions) error {
	if err := cacheCheckFormat(opts.Format); err != nil {
		return err
	}
	if err := checkQuietVerbose(opts.Quiet, opts.Verbose); err != nil {
		return err
	}
	ctx, cancel := streams.interrupted(ctx)
	defer cancel()
	c, err := pkgcache.OpenExisting(opts.Dir)
	if err != nil {
		return err
	}
	entries, err := c.List(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return cacheInterrupted("cache list", err)
		}
		return err
	}
	if opts.Format == "json" {
		return writeJSON(streams.Out, struct {
			CacheDir string             `json:"cache_dir"`
			Packages []cachePackageJSON `json:"packages"`
		}{c.Root(), packagesJSON(entries)})
	}
	if opts.Quiet {
		return nil
	}
	if len(entries) == 0 {
		fmt.Fprintf(streams.Out, "no packages in %s\n", term(c.Root()))
		return nil
	}
	tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
	header := "FULLNAME\tVERSION\tID\tSIZE\tLAST USE\tIN USE\tBY"
	if opts.Verbose {
		header += "\tDIR"
	}
	fmt.Fprintln(tw, header)
	for _, e := range entries {
		last := "never"
		if !e.LastUse.IsZero() {
			last = e.LastUse.Local().Format("2006-01-02 15:04")
		}
		inUse := "no"
		if e.InUse {
			inUse = "yes"
		}
		if opts.Verbose {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", term(e.FullName), term(e.Version), term(e.ID), formatCacheSize(e.Size), last, inUse, e.InstalledBy, term(e.Dir))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", term(e.FullName), term(e.Version), term(shortID(e.ID)), formatCacheSize(e.Size), last, inUse, e.InstalledBy)
	}
	var total int64
	for _, e := range entries {
		total += e.Size
	}
	fmt.Fprintf(tw, "total: %d %s, %s\n", len(entries), plural(len(entries), "package", "packages"), formatCacheSize(total))
	return tw.Flush()
}

type cachePruneOptions struct {
	Format    string
	Outdated  bool
	Keep      int
	UnusedFor string
	MaxSize   string
	DryRun    bool
	Verbose   bool
	Quiet     bool
	Dir       string
}

// addFlags declares cache prune's flags, each bound to its field of o.
func (o *cachePruneOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Format, "format", "text", "output format: text or json")
	f.BoolVar(&o.Outdated, "outdated", false, "remove older versions beyond --keep per FullName, and outdated ids")
	f.IntVar(&o.Keep, "keep", 1, "versions to keep per FullName with --outdated")
	f.StringVar(&o.UnusedFor, "unused-for", "", "remove packages not used for `DURATION` (e.g. 720h, 30d; above zero: 0 is refused, --max-size 0 removes every package not in use)")
	f.StringVar(&o.MaxSize, "max-size", "", "remove least recently used packages until the cache holds at most `SIZE` (e.g. 500MB, 2GiB)")
	f.BoolVar(&o.DryRun, "dry-run", false, "print what would be removed, remove nothing")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "print a summary even when nothing was removed")
	cacheQuietFlag(f, &o.Quiet, "print only errors: not what was removed, nor the packages skipped in use (exit status 3 says so)")
}

func newCachePruneCmd(streams *IO, dir *string) *cobra.Command {
	o := &cachePruneOptions{}
	c := &cobra.Command{
		Use:   "prune",
		Short: "Remove outdated, unused or least recently used packages",
		Long: `prune removes packages chosen by one or more policies:
  --outdated         versions older than the --keep newest per FullName, and
                     outdated ids (re-uploaded packages) of the versions kept
  --unused-for D     packages not used for D (e.g. 720h, 30d; above zero)
  --max-size S       least recently used packages until the cache holds at
                     most S (e.g. 500MB, 2GiB)
Each package is reported with the reason it was selected; for --unused-for
that is its own time since last use ("unused for 41 days").
A package murano-engine alone uses was last used when the engine last read
its manifest.yaml (its access time; see docs/cache.md for what atime
options make of it). Packages in use (a plan, an apply or a deployment of
the engine holds their usage lock) are skipped and reported, exit 3 (in use,
as for every cache command). A removed package leaves the engine's sight in
one rename. Only one prune runs at a time: a second one says so and exits 4
(a lock not taken). It prints nothing unless something was removed or
skipped, for cron, or with --verbose; with --quiet nothing but errors: a
package skipped in use is told by the exit status alone.`,
		Example: `  objgc cache prune --outdated --keep 2
  objgc cache prune --unused-for 30d --max-size 2GiB --dry-run`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cache, err := cacheSettings(c, dir)
			if err != nil {
				return err
			}
			opts := *o
			opts.Dir = cache
			return runCachePrune(c.Context(), streams, opts)
		},
	}
	o.addFlags(c.Flags())
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
	if err := checkQuietVerbose(opts.Quiet, opts.Verbose); err != nil {
		return err
	}
	if opts.UnusedFor != "" {
		d, err := parseUnusedFor(opts.UnusedFor)
		if err != nil {
			return &usageError{err}
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
	if popts.CheckPolicy() != nil {
		return usageErrorf("cache prune needs a policy: --outdated, --unused-for or --max-size")
	}
	ctx, cancel := streams.interrupted(ctx)
	defer cancel()
	c, err := pkgcache.OpenExisting(opts.Dir)
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
		return fmt.Errorf("cache prune: %w in %s; nothing was touched", err, c.Root())
	}
	if err != nil {
		if ctx.Err() != nil {
			return cacheInterrupted("cache prune", err)
		}
		return err
	}
	if opts.Format == "json" {
		if err := writeJSON(streams.Out, pruneJSON(res)); err != nil {
			return err
		}
		return pruneUnmet(res, opts.Quiet)
	}
	if len(res.Removed) == 0 && len(res.InUse) == 0 && res.Leftovers == 0 && !opts.Verbose {
		return nil // cron: quiet when nothing was done
	}
	verb, freed := "removed", "freed"
	if res.DryRun {
		verb, freed = "would remove", "would free"
	}
	if !opts.Quiet {
		for _, r := range res.Removed {
			fmt.Fprintf(streams.Out, "%s %s %s %s (%s, %s)\n", verb, term(r.FullName), term(r.Version), term(shortID(r.ID)), formatCacheSize(r.Size), term(r.Reason))
		}
	}
	if opts.Quiet {
		return pruneUnmet(res, true)
	}
	for _, r := range res.InUse {
		fmt.Fprintf(streams.Out, "skipped %s %s %s: in use (%s)\n", term(r.FullName), term(r.Version), term(shortID(r.ID)), term(r.Reason))
	}
	fmt.Fprintf(streams.Out, "%s %s in %d %s", freed, formatCacheSize(res.Freed), len(res.Removed), plural(len(res.Removed), "package", "packages"))
	if len(res.InUse) > 0 {
		fmt.Fprintf(streams.Out, ", %d skipped in use", len(res.InUse))
	}
	if res.Leftovers > 0 {
		fmt.Fprintf(streams.Out, ", %d %s of interrupted runs cleaned", res.Leftovers, plural(res.Leftovers, "leftover", "leftovers"))
	}
	fmt.Fprintln(streams.Out)
	return pruneUnmet(res, false)
}

// pruneUnmet is exit status 3 when the policies selected packages that are
// in use: the cache is not yet what the policies ask for. The packages are
// listed in the report and the error says it, except with quiet: a prune
// overlapping a deployment or an apply is an ordinary day on an engine
// host, and cron mails whatever a job prints, so the exit status alone
// tells it.
func pruneUnmet(res pkgcache.PruneResult, quiet bool) error {
	if res.PolicyMet {
		return nil
	}
	if quiet {
		return &exitError{code: ExitIncomplete}
	}
	return &exitError{code: ExitIncomplete, err: fmt.Errorf("cache prune: policy not met yet: %d selected %s in use; prune again when they are free", len(res.InUse), plural(len(res.InUse), "package", "packages"))}
}

// cacheRemovalJSON is one package in prune's JSON.
type cacheRemovalJSON struct {
	cachePackageJSON
	Reason string `json:"reason"`
}

func pruneJSON(res pkgcache.PruneResult) any {
	conv := func(rs []pkgcache.Removal) []cacheRemovalJSON {
		out := make([]cacheRemovalJSON, len(rs))
		for i, r := range rs {
			out[i] = cacheRemovalJSON{packageJSON(r.Entry), r.Reason}
		}
		return out
	}
	return struct {
		DryRun    bool               `json:"dry_run"`
		Removed   []cacheRemovalJSON `json:"removed"`
		InUse     []cacheRemovalJSON `json:"in_use"`
		PolicyMet bool               `json:"policy_met"`
		Freed     int64              `json:"freed"`
		Leftovers int                `json:"tmp_leftovers"`
	}{res.DryRun, conv(res.Removed), conv(res.InUse), res.PolicyMet, res.Freed, res.Leftovers}
}

type cacheVerifyOptions struct {
	Format string
	Quiet  bool
	Dir    string
}

// addFlags declares cache verify's flags, each bound to its field of o.
func (o *cacheVerifyOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Format, "format", "text", "output format: text or json")
	cacheQuietFlag(f, &o.Quiet, "print only the problems found, not the count of packages verified")
}

func newCacheVerifyCmd(streams *IO, dir *string) *cobra.Command {
	o := &cacheVerifyOptions{}
	c := &cobra.Command{
		Use:   "verify",
		Short: "Check that every cached package is complete and unchanged since it was unpacked",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cache, err := cacheSettings(c, dir)
			if err != nil {
				return err
			}
			opts := *o
			opts.Dir = cache
			return runCacheVerify(c.Context(), streams, opts)
		},
	}
	o.addFlags(c.Flags())
	return c
}

func runCacheVerify(ctx context.Context, streams *IO, opts cacheVerifyOptions) error {
	if err := cacheCheckFormat(opts.Format); err != nil {
		return err
	}
	ctx, cancel := streams.interrupted(ctx)
	defer cancel()
	c, err := pkgcache.OpenExisting(opts.Dir)
	if err != nil {
		return err
	}
	res, err := c.Verify(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return cacheInterrupted("cache verify", err)
		}
		return err
	}
	if opts.Format == "json" {
		if res.Problems == nil {
			res.Problems = []pkgcache.Problem{}
		}
		if err := writeJSON(streams.Out, res); err != nil {
			return err
		}
	} else {
		for _, p := range res.Problems {
			fmt.Fprintf(streams.Out, "%s: %s\n", term(p.Path), term(p.Problem))
		}
		if len(res.Problems) == 0 && !opts.Quiet {
			fmt.Fprintf(streams.Out, "%d %s verified", res.Checked, plural(res.Checked, "package", "packages"))
			if res.Engine > 0 {
				fmt.Fprintf(streams.Out, " (%d unpacked by murano-engine: no digests recorded, manifest and class files parse)", res.Engine)
			}
			fmt.Fprintln(streams.Out)
		}
	}
	if len(res.Problems) > 0 {
		return fmt.Errorf("cache verify: %d %s in %s; repair a damaged package with objgc cache add --force SRC (its archive or directory), or remove it with objgc cache prune", len(res.Problems), plural(len(res.Problems), "problem", "problems"), c.Root())
	}
	return nil
}

type cachePathOptions struct {
	Format   string
	Quiet    bool
	Dir      string
	FullName string
	Version  string
}

// addFlags declares cache path's flags, each bound to its field of o.
func (o *cachePathOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Format, "format", "text", "output format: text or json")
	cacheQuietFlag(f, &o.Quiet, "print only errors: the exit status says whether the package is cached (0) or not (1)")
}

func newCachePathCmd(streams *IO, dir *string) *cobra.Command {
	o := &cachePathOptions{}
	c := &cobra.Command{
		Use:   "path FULLNAME [VERSION]",
		Short: "Print the directory of a cached package (its highest version by default)",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			cache, err := cacheSettings(c, dir)
			if err != nil {
				return err
			}
			opts := *o
			opts.Dir = cache
			opts.FullName = args[0]
			if len(args) == 2 {
				opts.Version = args[1]
			}
			return runCachePath(streams, opts)
		},
	}
	o.addFlags(c.Flags())
	return c
}

func runCachePath(streams *IO, opts cachePathOptions) error {
	if err := cacheCheckFormat(opts.Format); err != nil {
		return err
	}
	c, err := pkgcache.OpenExisting(opts.Dir)
	if err != nil {
		return err
	}
	e, err := c.Lookup(opts.FullName, opts.Version)
	if err != nil {
		return err
	}
	if opts.Format == "json" {
		return writeJSON(streams.Out, struct {
			FullName string `json:"full_name"`
			Version  string `json:"version"`
			ID       string `json:"id"`
			Dir      string `json:"dir"` // as in cache list (docs/json.md)
		}{e.FullName, e.Version, e.ID, e.Dir})
	}
	if !opts.Quiet {
		fmt.Fprintln(streams.Out, term(e.Dir))
	}
	return nil
}

// cacheQuietFlag adds --quiet (-q), bound to quiet, to a cache command: in text output,
// errors and warnings only, for cron and CI logs; the JSON output
// (--format json) is the same with it. usage says what the command then
// leaves out.
func cacheQuietFlag(f *pflag.FlagSet, quiet *bool, usage string) {
	f.BoolVarP(quiet, "quiet", "q", false, usage)
}

func cacheCheckFormat(f string) error {
	if f != "text" && f != "json" {
		return usageErrorf("--format must be text or json, not %q", f)
	}
	return nil
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

// checkQuietVerbose refuses --quiet with --verbose, as apply does.
func checkQuietVerbose(quiet, verbose bool) error {
	if quiet && verbose {
		return usageErrorf("--quiet and --verbose contradict each other; give one")
	}
	return nil
}

type cacheMigrateOptions struct {
	Format string
	Quiet  bool
	Dir    string
}

// addFlags declares cache migrate's flags, each bound to its field of o.
func (o *cacheMigrateOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Format, "format", "text", "output format: text or json")
	cacheQuietFlag(f, &o.Quiet, "print only errors and warnings (packages skipped in use), not what was moved")
}

func newCacheMigrateCmd(streams *IO, dir *string) *cobra.Command {
	o := &cacheMigrateOptions{}
	c := &cobra.Command{
		Use:   "migrate",
		Short: "Move the packages of a cache made by an earlier objgc to the engine's layout",
		Long: `migrate moves every package of both earlier objgc layouts,
packages/<FullName>/<version>@<id>/ and packages/<FullName>/<version>/<id>/
(with locks/ beside), to murano-engine's layout, <FullName>/<version>/<id>/,
and says what it moved. Until it has run, the other cache commands, plan and
apply refuse a cache in an earlier layout. Packages in use (an older objgc's
plan or apply holds their usage lock) are skipped and reported, exit 3: run
it again when they are free. It can run again at any time; packages already
moved are not touched. It runs under the prune lock: not beside a prune.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cache, err := cacheSettings(c, dir)
			if err != nil {
				return err
			}
			opts := *o
			opts.Dir = cache
			return runCacheMigrate(c.Context(), streams, opts)
		},
	}
	o.addFlags(c.Flags())
	return c
}

func runCacheMigrate(ctx context.Context, streams *IO, opts cacheMigrateOptions) error {
	if err := cacheCheckFormat(opts.Format); err != nil {
		return err
	}
	ctx, cancel := streams.interrupted(ctx)
	defer cancel()
	c, err := pkgcache.OpenForMigrate(opts.Dir)
	if err != nil {
		return err
	}
	res, err := c.Migrate(ctx)
	if errors.Is(err, pkgcache.ErrPruneRunning) {
		return fmt.Errorf("cache migrate: %w in %s; nothing was touched", err, c.Root())
	}
	if err != nil && ctx.Err() != nil {
		return cacheInterrupted("cache migrate", err)
	}
	if opts.Format == "json" {
		left := res.Left
		if left == nil {
			left = []pkgcache.Problem{}
		}
		if jerr := writeJSON(streams.Out, struct {
			Moved      []cachePackageJSON `json:"moved"`
			Duplicates []cachePackageJSON `json:"duplicates"`
			InUse      []cachePackageJSON `json:"in_use"`
			Left       []pkgcache.Problem `json:"left"`
			Leftovers  int                `json:"trash_leftovers"`
			Done       bool               `json:"done"`
		}{packagesJSON(res.Moved), packagesJSON(res.Duplicates), packagesJSON(res.InUse), left, res.Leftovers, err == nil && res.Done()}); jerr != nil {
			return jerr
		}
	} else {
		if !opts.Quiet {
			for _, e := range res.Moved {
				fmt.Fprintf(streams.Out, "moved %s %s %s\n", term(e.FullName), term(e.Version), term(shortID(e.ID)))
			}
			for _, e := range res.Duplicates {
				fmt.Fprintf(streams.Out, "removed old copy of %s %s %s (already in the engine's layout)\n", term(e.FullName), term(e.Version), term(shortID(e.ID)))
			}
		}
		for _, e := range res.InUse {
			fmt.Fprintf(streams.Out, "skipped %s %s %s: in use\n", term(e.FullName), term(e.Version), term(shortID(e.ID)))
		}
		for _, p := range res.Left {
			fmt.Fprintf(streams.Out, "%s: %s\n", term(p.Path), term(p.Problem))
		}
		if !opts.Quiet && err == nil {
			fmt.Fprintf(streams.Out, "moved %d %s to the engine's layout", len(res.Moved), plural(len(res.Moved), "package", "packages"))
			if res.Leftovers > 0 {
				fmt.Fprintf(streams.Out, ", %d %s of interrupted runs cleaned", res.Leftovers, plural(res.Leftovers, "leftover", "leftovers"))
			}
			fmt.Fprintln(streams.Out)
		}
	}
	switch {
	case err != nil:
		return err
	case len(res.Left) > 0:
		return fmt.Errorf("cache migrate: %d %s in packages/ of %s not packages; move or remove them by hand and migrate again", len(res.Left), plural(len(res.Left), "name", "names"), c.Root())
	case len(res.InUse) > 0:
		return &exitError{code: ExitIncomplete, err: fmt.Errorf("cache migrate: %d %s in use, not moved; migrate again when they are free", len(res.InUse), plural(len(res.InUse), "package", "packages"))}
	}
	return nil
}

type cacheRmOptions struct {
	Format string
	Quiet  bool
	Dir    string
	Refs   []string
}

// addFlags declares cache rm's flags, each bound to its field of o.
func (o *cacheRmOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Format, "format", "text", "output format: text or json")
	cacheQuietFlag(f, &o.Quiet, "print only errors and the packages skipped in use, not what was removed")
}

func newCacheRmCmd(streams *IO, dir *string) *cobra.Command {
	o := &cacheRmOptions{}
	c := &cobra.Command{
		Use:   "rm ID|FULLNAME[@VERSION]...",
		Short: "Remove packages: one id, every id of a version, or every version of a FullName",
		Long: `rm removes the packages each argument names: a package id (whole, or the
first 12 characters or more that cache list shows), FULLNAME@VERSION (every id
of that version) or FULLNAME (every version). A package in use (a plan, an
apply or a deployment of murano-engine holds its usage lock) is not removed:
it is listed and rm exits 3; run it again when it is free. A removed package
leaves the engine's sight in one rename, then is deleted. An argument that
names no cached package is an error (exit 1); the others are still removed.`,
		Example: `  objgc cache rm com.example.WordPress@1.0.0
  objgc cache rm 1f7bfcf81905`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cache, err := cacheSettings(c, dir)
			if err != nil {
				return err
			}
			opts := *o
			opts.Dir = cache
			opts.Refs = args
			return runCacheRm(c.Context(), streams, opts)
		},
	}
	o.addFlags(c.Flags())
	return c
}

func runCacheRm(ctx context.Context, streams *IO, opts cacheRmOptions) error {
	if err := cacheCheckFormat(opts.Format); err != nil {
		return err
	}
	ctx, cancel := streams.interrupted(ctx)
	defer cancel()
	c, err := pkgcache.OpenExisting(opts.Dir)
	if err != nil {
		return err
	}
	var all pkgcache.RemoveResult
	type failure struct {
		Ref   string `json:"ref"`
		Error string `json:"error"`
	}
	failed := []failure{}
	for _, ref := range opts.Refs {
		res, err := c.Remove(ctx, ref)
		all.Removed = append(all.Removed, res.Removed...)
		all.InUse = append(all.InUse, res.InUse...)
		all.Freed += res.Freed
		if err != nil {
			if ctx.Err() != nil {
				return cacheInterrupted("cache rm", err)
			}
			if !errors.Is(err, pkgcache.ErrNotFound) {
				return err
			}
			failed = append(failed, failure{ref, err.Error()})
		}
	}
	if opts.Format == "json" {
		if err := writeJSON(streams.Out, struct {
			Removed []cachePackageJSON `json:"removed"`
			InUse   []cachePackageJSON `json:"in_use"`
			Failed  []failure          `json:"failed"`
			Freed   int64              `json:"freed"`
		}{packagesJSON(all.Removed), packagesJSON(all.InUse), failed, all.Freed}); err != nil {
			return err
		}
	} else {
		if !opts.Quiet {
			for _, e := range all.Removed {
				fmt.Fprintf(streams.Out, "removed %s %s %s (%s)\n", term(e.FullName), term(e.Version), term(shortID(e.ID)), formatCacheSize(e.Size))
			}
		}
		for _, e := range all.InUse {
			fmt.Fprintf(streams.Out, "skipped %s %s %s: in use\n", term(e.FullName), term(e.Version), term(shortID(e.ID)))
		}
		for _, f := range failed {
			fmt.Fprintf(streams.Err, "objgc: cache rm: %s\n", term(f.Error))
		}
	}
	switch {
	case len(failed) > 0:
		return &exitError{code: ExitError, err: fmt.Errorf("cache rm: %d %s named no cached package", len(failed), plural(len(failed), "argument", "arguments"))}
	case len(all.InUse) > 0:
		return &exitError{code: ExitIncomplete, err: fmt.Errorf("cache rm: %d %s in use, not removed; run it again when they are free", len(all.InUse), plural(len(all.InUse), "package", "packages"))}
	}
	return nil
}
