package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	units "github.com/docker/go-units"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/objgc/objgc/pkgcache"
)

type cacheAddOptions struct {
	cacheOutput
	MaxUnpackedSize byteSize
	MaxEntries      int
	ConnectTimeout  time.Duration
	HeaderTimeout   time.Duration
	IdleTimeout     time.Duration
	Force           bool
	Verbose         bool
	Dir             string
	Sources         []string
	// opened are the local sources read before a root process became
	// the cache's owner (see cacheSubcommand.beforeBecome).
	opened map[string]*pkgcache.Source
}

// addFlags declares cache add's own flags, each bound to its field of o.
func (o *cacheAddOptions) addFlags(f *pflag.FlagSet) {
	sizeVar(f, &o.MaxUnpackedSize, "max-unpacked-size", units.BytesSize(float64(pkgcache.DefaultMaxUnpackedSize)), true, "reject archives larger than `SIZE` or that expand past it (e.g. 100MB, 2GiB)")
	f.IntVar(&o.MaxEntries, "max-entries", pkgcache.DefaultMaxEntries, "reject archives of more than `N` entries (files, directories, links)")
	timeoutVar(f, &o.ConnectTimeout, "connect-timeout", pkgcache.DefaultConnectTimeout, "give up a download when connecting takes longer than `DURATION`")
	timeoutVar(f, &o.HeaderTimeout, "header-timeout", pkgcache.DefaultHeaderTimeout, "give up a download when the response headers take longer than `DURATION`")
	timeoutVar(f, &o.IdleTimeout, "idle-timeout", pkgcache.DefaultIdleTimeout, "give up a download when no data arrives for `DURATION`")
	f.BoolVar(&o.Force, "force", false, "unpack again and replace a package already cached (repairs a damaged one)")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "print each package's directory and size too")
}

func newCacheAddCmd(streams *IO) cacheSubcommand {
	o := &cacheAddOptions{}
	return cacheSubcommand{out: &o.cacheOutput, flags: o.addFlags,
		quiet: "print only errors and warnings (ids kept in use), not what was added",
		run: func(ctx context.Context, cache string, args []string) error {
			opts := *o
			opts.Dir = cache
			opts.Sources = args
			return runCacheAdd(ctx, streams, opts)
		},
		// The operator's archives and directories are read as root:
		// the cache's owner may not be able to read them.
		beforeBecome: func(ctx context.Context, args []string) {
			o.opened = map[string]*pkgcache.Source{}
			for _, src := range args {
				if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") {
					o.opened[src] = pkgcache.OpenSource(ctx, src, o.MaxUnpackedSize.Bytes, o.MaxEntries)
				}
			}
		},
		cmd: &cobra.Command{
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
		}}
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
	if err := checkQuietVerbose(opts.Quiet, opts.Verbose); err != nil {
		return err
	}
	if opts.MaxEntries < 1 {
		return usageErrorf("--max-entries must be at least 1, not %d", opts.MaxEntries)
	}
	ctx, cancel := streams.interrupted(ctx)
	defer cancel()
	c, err := pkgcache.Open(opts.Dir)
	if err != nil {
		return err
	}
	c.MaxUnpackedSize, c.MaxEntries = opts.MaxUnpackedSize.Bytes, opts.MaxEntries
	c.ConnectTimeout, c.HeaderTimeout, c.IdleTimeout = opts.ConnectTimeout, opts.HeaderTimeout, opts.IdleTimeout
	out := cacheAddJSON{Added: []cacheAddedJSON{}, Failed: []cacheAddFailure{}}
	locked, inUse := 0, 0
	for _, s := range opts.opened {
		defer s.Close()
	}
	for _, src := range opts.Sources {
		add := c.Add
		if opts.Force {
			add = c.Reinstall
		}
		if s, ok := opts.opened[src]; ok {
			add = func(ctx context.Context, src string) (pkgcache.AddResult, error) {
				return c.AddSource(ctx, src, s, opts.Force)
			}
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
