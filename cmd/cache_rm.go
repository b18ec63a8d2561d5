package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/objgc/objgc/pkgcache"
)

type cacheMigrateOptions struct {
	cacheOutput
	Dir string
}

func newCacheMigrateCmd(streams *IO) cacheSubcommand {
	o := &cacheMigrateOptions{}
	return cacheSubcommand{out: &o.cacheOutput,
		quiet: "print only errors and warnings (packages skipped in use), not what was moved",
		run: func(ctx context.Context, cache string, _ []string) error {
			opts := *o
			opts.Dir = cache
			return runCacheMigrate(ctx, streams, opts)
		},
		cmd: &cobra.Command{
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
		}}
}

func runCacheMigrate(ctx context.Context, streams *IO, opts cacheMigrateOptions) error {
	ctx, cancel := streams.interrupted(ctx)
	defer cancel()
	c, err := openExistingCache(streams, opts.Dir, true)
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
			fmt.Fprintf(streams.Out, "skipped %s %s %s: in use%s\n", term(e.FullName), term(e.Version), term(shortID(e.ID)), holderText(usageHolder(c, e.ID)))
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
	cacheOutput
	Dir  string
	Refs []string
}

func newCacheRmCmd(streams *IO) cacheSubcommand {
	o := &cacheRmOptions{}
	return cacheSubcommand{out: &o.cacheOutput,
		quiet: "print only errors and the packages skipped in use, not what was removed",
		run: func(ctx context.Context, cache string, args []string) error {
			opts := *o
			opts.Dir = cache
			opts.Refs = args
			return runCacheRm(ctx, streams, opts)
		},
		cmd: &cobra.Command{
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
		}}
}

func runCacheRm(ctx context.Context, streams *IO, opts cacheRmOptions) error {
	ctx, cancel := streams.interrupted(ctx)
	defer cancel()
	c, err := openExistingCache(streams, opts.Dir, false)
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
			fmt.Fprintf(streams.Out, "skipped %s %s %s: in use%s%s\n", term(e.FullName), term(e.Version), term(shortID(e.ID)), inUseWhy(e), holderText(usageHolder(c, e.ID)))
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
