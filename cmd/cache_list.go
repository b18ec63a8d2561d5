package cmd

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/objgc/objgc/pkgcache"
)

type cacheListOptions struct {
	cacheOutput
	Verbose bool
	Dir     string
}

// addFlags declares cache list's own flags, each bound to its field of o.
func (o *cacheListOptions) addFlags(f *pflag.FlagSet) {
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "print whole ids and each package's directory")
}

func newCacheListCmd(streams *IO) cacheSubcommand {
	o := &cacheListOptions{}
	return cacheSubcommand{out: &o.cacheOutput, flags: o.addFlags,
		quiet: "print only errors: nothing when the cache can be read (exit status 0), for a check",
		run: func(ctx context.Context, cache string, _ []string) error {
			opts := *o
			opts.Dir = cache
			return runCacheList(ctx, streams, opts)
		},
		cmd: &cobra.Command{
			Use:   "list",
			Short: "List cached packages: FullName, version, id, size, install time, last use (as prune counts it), in use",
			Args:  noArgs,
		}}
}

func runCacheList(ctx context.Context, streams *IO, opts cacheListOptions) error {
	if err := checkQuietVerbose(opts.Quiet, opts.Verbose); err != nil {
		return err
	}
	ctx, cancel := streams.interrupted(ctx)
	defer cancel()
	c, err := openExistingCache(streams, opts.Dir, false)
	if err != nil {
		return err
	}
	entries, other, err := c.ListAll(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return cacheInterrupted("cache list", err)
		}
		return err
	}
	if opts.Format == "json" {
		return writeJSON(streams.Out, struct {
			CacheDir     string                  `json:"cache_dir"`
			Packages     []cachePackageJSON      `json:"packages"`
			Unclassified []pkgcache.Unclassified `json:"unclassified"`
		}{c.Root(), packagesJSON(entries), nonNil(other)})
	}
	warnUnclassified(streams, other)
	if opts.Quiet {
		return nil
	}
	if len(entries) == 0 {
		fmt.Fprintf(streams.Out, "no packages in %s\n", term(c.Root()))
		return nil
	}
	tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
	// LAST USE is the time prune counts (the later of the last use and
	// the install), beside INSTALLED, so that a package kept by
	// --unused-for shows why.
	header := "FULLNAME\tVERSION\tID\tSIZE\tINSTALLED\tLAST USE\tIN USE\tBY"
	if opts.Verbose {
		header += "\tDIR"
	}
	fmt.Fprintln(tw, header)
	when := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.Local().Format("2006-01-02 15:04")
	}
	for _, e := range entries {
		installed, last := when(e.Installed), when(e.UnusedSince())
		inUse := "no"
		if e.InUse {
			inUse = "yes"
		}
		if opts.Verbose {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", term(e.FullName), term(e.Version), term(e.ID), formatCacheSize(e.Size), installed, last, inUse, e.InstalledBy, term(e.Dir))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", term(e.FullName), term(e.Version), term(shortID(e.ID)), formatCacheSize(e.Size), installed, last, inUse, e.InstalledBy)
	}
	var total int64
	for _, e := range entries {
		total += e.Size
	}
	fmt.Fprintf(tw, "total: %d %s, %s\n", len(entries), plural(len(entries), "package", "packages"), formatCacheSize(total))
	return tw.Flush()
}

type cacheVerifyOptions struct {
	cacheOutput
	Dir string
}

func newCacheVerifyCmd(streams *IO) cacheSubcommand {
	o := &cacheVerifyOptions{}
	return cacheSubcommand{out: &o.cacheOutput,
		quiet: "print only the problems found, not the count of packages verified",
		run: func(ctx context.Context, cache string, _ []string) error {
			opts := *o
			opts.Dir = cache
			return runCacheVerify(ctx, streams, opts)
		},
		cmd: &cobra.Command{
			Use:   "verify",
			Short: "Check that every cached package is complete and unchanged since it was unpacked",
			Long: `verify checks every cached package: one objgc added against the sha256 of
every file recorded when it was added, one murano-engine unpacked by
loading its manifest and class files. A package the engine is unpacking is
waited for (at most 10 seconds), never reported as damaged; one still being
unpacked is listed and verify exits 3. It is a monitoring check for a live
engine host: exit 0 all whole, 1 something damaged (the problems are
listed), 3 a package could not be checked yet; with --quiet it prints
nothing when all is whole.`,
			Args: noArgs,
		}}
}

func runCacheVerify(ctx context.Context, streams *IO, opts cacheVerifyOptions) error {
	ctx, cancel := streams.interrupted(ctx)
	defer cancel()
	c, err := openExistingCache(streams, opts.Dir, false)
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
		if res.InUse == nil {
			res.InUse = []pkgcache.Problem{}
		}
		if err := writeJSON(streams.Out, res); err != nil {
			return err
		}
	} else {
		for _, p := range res.Problems {
			fmt.Fprintf(streams.Out, "%s: %s\n", term(p.Path), term(p.Problem))
		}
		for _, p := range res.InUse {
			fmt.Fprintf(streams.Out, "%s: %s\n", term(p.Path), term(p.Problem))
		}
		if len(res.Problems) == 0 && len(res.InUse) == 0 && !opts.Quiet {
			fmt.Fprintf(streams.Out, "%d %s verified", res.Checked, plural(res.Checked, "package", "packages"))
			if res.Engine > 0 {
				fmt.Fprintf(streams.Out, " (%d unpacked by murano-engine: no digests recorded, manifest and class files parse)", res.Engine)
			}
			fmt.Fprintln(streams.Out)
		}
	}
	if len(res.Problems) > 0 {
		return fmt.Errorf("cache verify: %d %s in %s; %s", len(res.Problems), plural(len(res.Problems), "problem", "problems"), c.Root(), verifyFixes(res.Problems))
	}
	if len(res.InUse) > 0 {
		return &exitError{code: ExitIncomplete, err: fmt.Errorf("cache verify: %d %s being unpacked, not verified; verify again later", len(res.InUse), plural(len(res.InUse), "package", "packages"))}
	}
	return nil
}

// verifyFixes says how to fix each damaged package of problems, by its
// origin: one the engine unpacked has no source objgc knows, and the
// engine downloads it again once it is gone (cache rm); one objgc added
// is added again from its archive or directory (cache add --force), or
// removed. Names that belong to no package are for the operator to move.
func verifyFixes(problems []pkgcache.Problem) string {
	var fixes []string
	seen := map[string]bool{}
	strays := false
	for _, p := range problems {
		switch {
		case p.ID == "":
			strays = true
		case seen[p.ID]:
		case p.InstalledBy == "engine":
			seen[p.ID] = true
			fixes = append(fixes, fmt.Sprintf("%s %s was unpacked by murano-engine: remove it with objgc cache rm %s, and the engine downloads it again when a deployment needs it",
				term(p.FullName), term(p.Version), term(p.ID)))
		default:
			seen[p.ID] = true
			fixes = append(fixes, fmt.Sprintf("%s %s was added with objgc cache add: add it again with objgc cache add --force SRC (its archive or directory), or remove it with objgc cache rm %s",
				term(p.FullName), term(p.Version), term(p.ID)))
		}
	}
	if strays {
		fixes = append(fixes, "move or remove by hand the names that belong to no package")
	}
	return strings.Join(fixes, "; ")
}

type cachePathOptions struct {
	cacheOutput
	Dir      string
	FullName string
	Version  string
}

func newCachePathCmd(streams *IO) cacheSubcommand {
	o := &cachePathOptions{}
	return cacheSubcommand{out: &o.cacheOutput,
		quiet: "print only errors: the exit status says whether the package is cached (0) or not (1)",
		run: func(ctx context.Context, cache string, args []string) error {
			opts := *o
			opts.Dir = cache
			opts.FullName = args[0]
			if len(args) == 2 {
				opts.Version = args[1]
			}
			return runCachePath(streams, opts)
		},
		cmd: &cobra.Command{
			Use:   "path FULLNAME [VERSION]",
			Short: "Print the directory of a cached package (its highest version by default)",
			Args:  cobra.RangeArgs(1, 2),
		}}
}

func runCachePath(streams *IO, opts cachePathOptions) error {
	c, err := openExistingCache(streams, opts.Dir, false)
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
