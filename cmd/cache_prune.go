package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/objgc/objgc/pkgcache"
)

type cachePruneOptions struct {
	cacheOutput
	Outdated  bool
	Keep      int
	UnusedFor time.Duration // 0: no such policy
	MaxSize   byteSize
	DryRun    bool
	Verbose   bool
	Dir       string
}

// addFlags declares cache prune's own flags, each bound to its field of o.
func (o *cachePruneOptions) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.Outdated, "outdated", false, "remove older versions beyond --keep per FullName, and outdated ids")
	f.IntVar(&o.Keep, "keep", 1, "versions to keep per FullName with --outdated")
	unusedForVar(f, &o.UnusedFor, "remove packages not used for `DURATION` (e.g. 720h, 30d; above zero: 0 is refused, --max-size 0 removes every package not in use)")
	sizeVar(f, &o.MaxSize, "max-size", "", false, "remove least recently used packages until the cache holds at most `SIZE` (e.g. 500MB, 2GiB)")
	f.BoolVar(&o.DryRun, "dry-run", false, "print what would be kept and removed, and why; write nothing")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "print a summary even when nothing was removed")
}

func newCachePruneCmd(streams *IO) cacheSubcommand {
	o := &cachePruneOptions{}
	return cacheSubcommand{out: &o.cacheOutput, flags: o.addFlags,
		quiet: "print only errors: not what was removed, nor the packages skipped in use (exit status 3 says so)",
		run: func(ctx context.Context, cache string, _ []string) error {
			opts := *o
			opts.Dir = cache
			return runCachePrune(ctx, streams, opts)
		},
		cmd: &cobra.Command{
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
its manifest.yaml (its access time); where access times do not show that
(noatime), --unused-for selects none of the engine's packages and says so:
use --outdated and --max-size there. Packages in use (a plan, an apply or a
deployment of the engine holds their usage lock, or has its deleted usage
lock file open) are skipped and reported, exit 3 (in use, as for every
cache command). A removed package leaves the engine's sight in one rename;
its lock files stay. Only one prune runs at a time: a second one says so and exits 4
(a lock not taken). It prints nothing unless something was removed or
skipped, for cron, or with --verbose; with --quiet nothing but errors: a
package skipped in use, and another prune running, are told by the exit
status alone (3, 4).`,
			Example: `  objgc cache prune --outdated --keep 2
  objgc cache prune --unused-for 30d --max-size 2GiB --dry-run`,
			Args: noArgs,
		}}
}

func runCachePrune(ctx context.Context, streams *IO, opts cachePruneOptions) error {
	popts := pkgcache.PruneOptions{
		Outdated: opts.Outdated, Keep: opts.Keep, UnusedFor: opts.UnusedFor,
		LimitSize: opts.MaxSize.Given, MaxSize: opts.MaxSize.Bytes, DryRun: opts.DryRun,
	}
	if opts.Keep < 1 {
		return usageErrorf("--keep must be at least 1, not %d", opts.Keep)
	}
	if err := checkQuietVerbose(opts.Quiet, opts.Verbose); err != nil {
		return err
	}
	if popts.CheckPolicy() != nil {
		return usageErrorf("cache prune needs a policy: --outdated, --unused-for or --max-size")
	}
	ctx, cancel := streams.interrupted(ctx)
	defer cancel()
	c, err := openExistingCache(streams, opts.Dir, false)
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
		if opts.Quiet {
			// As a package in use (pruneUnmet): an ordinary night on an
			// engine host, told by the exit status alone.
			return &exitError{code: ExitLocked}
		}
		return fmt.Errorf("cache prune: %w in %s; nothing was touched", err, c.Root())
	}
	if err != nil {
		if ctx.Err() != nil {
			return cacheInterrupted("cache prune", err)
		}
		return err
	}
	if opts.Format != "json" {
		for _, w := range res.Warnings {
			fmt.Fprintf(streams.Err, "objgc: warning: %s\n", term(w))
		}
	}
	if opts.Format == "json" {
		if err := writeJSON(streams.Out, pruneJSON(c, res)); err != nil {
			return err
		}
		return pruneUnmet(res, opts.Quiet)
	}
	// Names under the root that are no package are news every night
	// until someone looks: a link there may be an attack.
	warnUnclassified(streams, res.Unclassified)
	if len(res.Removed) == 0 && len(res.InUse) == 0 && res.Leftovers == 0 && !opts.Verbose && !res.DryRun {
		return nil // cron: quiet when nothing was done
	}
	verb, freed := "removed", "freed"
	if res.DryRun {
		verb, freed = "would remove", "would free"
	}
	if !opts.Quiet {
		// A dry run shows the whole table, what stays and why too, even
		// when it would remove nothing.
		for _, r := range res.Kept {
			fmt.Fprintf(streams.Out, "would keep %s %s %s (%s)\n", term(r.FullName), term(r.Version), term(shortID(r.ID)), term(r.Reason))
		}
		for _, r := range res.Removed {
			fmt.Fprintf(streams.Out, "%s %s %s %s (%s, %s)\n", verb, term(r.FullName), term(r.Version), term(shortID(r.ID)), formatCacheSize(r.Size), term(r.Reason))
		}
	}
	if opts.Quiet {
		return pruneUnmet(res, true)
	}
	for _, r := range res.InUse {
		fmt.Fprintf(streams.Out, "skipped %s %s %s: in use%s (%s)%s\n", term(r.FullName), term(r.Version), term(shortID(r.ID)), inUseWhy(r.Entry), term(r.Reason), holderText(usageHolder(c, r.ID)))
	}
	fmt.Fprintf(streams.Out, "%s %s in %d %s", freed, formatCacheSize(res.Freed), len(res.Removed), plural(len(res.Removed), "package", "packages"))
	if len(res.InUse) > 0 {
		fmt.Fprintf(streams.Out, ", %d skipped in use", len(res.InUse))
	}
	if res.Leftovers > 0 {
		fmt.Fprintf(streams.Out, ", %d %s of interrupted runs cleaned", res.Leftovers, plural(res.Leftovers, "leftover", "leftovers"))
	}
	if res.DryRun {
		fmt.Fprintf(streams.Out, ", keeping %d", len(res.Kept))
	}
	fmt.Fprintln(streams.Out)
	if opts.Verbose {
		fmt.Fprintf(streams.Out, "orphaned locks: %s\n", term(res.OrphanedLocks))
	}
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
	if len(res.InUse) == 0 {
		// Over --max-size with what no prune removes: said even with
		// --quiet, since no later run will do better.
		var n int64
		for _, u := range res.Unclassified {
			n += u.Size
		}
		return &exitError{code: ExitIncomplete, err: fmt.Errorf("cache prune: policy not met: %s under the cache root %s no package (see the warnings) and keep it over --max-size; objgc neither follows nor deletes them: move them away", formatCacheSize(n), plural(len(res.Unclassified), "is", "are"))}
	}
	if quiet {
		return &exitError{code: ExitIncomplete}
	}
	return &exitError{code: ExitIncomplete, err: fmt.Errorf("cache prune: policy not met yet: %d selected %s in use; prune again when they are free", len(res.InUse), plural(len(res.InUse), "package", "packages"))}
}

// cacheRemovalJSON is one package in prune's JSON; HeldBy only for one
// skipped in use.
type cacheRemovalJSON struct {
	cachePackageJSON
	Reason string      `json:"reason"`
	HeldBy *holderJSON `json:"held_by,omitempty"`
}

func pruneJSON(c *pkgcache.Cache, res pkgcache.PruneResult) any {
	conv := func(rs []pkgcache.Removal, inUse bool) []cacheRemovalJSON {
		out := make([]cacheRemovalJSON, len(rs))
		for i, r := range rs {
			out[i] = cacheRemovalJSON{cachePackageJSON: packageJSON(r.Entry), Reason: r.Reason}
			if inUse {
				out[i].HeldBy = usageHolder(c, r.ID)
			}
		}
		return out
	}
	return struct {
		DryRun       bool                    `json:"dry_run"`
		Kept         []cacheRemovalJSON      `json:"kept,omitempty"`
		Removed      []cacheRemovalJSON      `json:"removed"`
		InUse        []cacheRemovalJSON      `json:"in_use"`
		PolicyMet    bool                    `json:"policy_met"`
		Freed        int64                   `json:"freed"`
		Leftovers    int                     `json:"tmp_leftovers"`
		Orphaned     string                  `json:"orphaned_locks"`
		Warnings     []string                `json:"warnings"`
		Unclassified []pkgcache.Unclassified `json:"unclassified"`
	}{res.DryRun, conv(res.Kept, false), conv(res.Removed, false), conv(res.InUse, true), res.PolicyMet, res.Freed, res.Leftovers, res.OrphanedLocks, append([]string{}, res.Warnings...), nonNil(res.Unclassified)}
}

// inUseWhy is ": REASON" for a package in use for another reason than
// its usage lock being held (pkgcache.Entry.InUseReason), else "".
func inUseWhy(e pkgcache.Entry) string {
	if e.InUseReason == "" {
		return ""
	}
	return ": " + term(e.InUseReason)
}

// warnUnclassified says on stderr what under the cache root is neither a
// package, nor a lock file, nor objgc's own: objgc never follows, reads
// or deletes it.
func warnUnclassified(streams *IO, us []pkgcache.Unclassified) {
	for _, u := range us {
		fmt.Fprintf(streams.Err, "objgc: warning: %s (%s): %s\n", term(u.Path), formatCacheSize(u.Size), term(u.Problem))
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
