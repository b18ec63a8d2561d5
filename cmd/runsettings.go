package cmd

import (
	"github.com/spf13/pflag"
)

// runSettings are the settings plan and apply share, declared once
// here: the inputs (MODEL, or --snapshot and --graph), where the hooks
// are (--hooks-dir, and the package cache: --cache-dir or
// --murano-config), whether hooks run at all (--no-hooks) or are
// required (--require-hooks), and what a reference to a doomed object
// does (--on-dangling). A saved plan records them and apply of it runs
// with them (what may differ is in docs/apply.md), so each has one
// flag, one help text, one configuration key and one variable
// (sharedSettings), and plan judges a plan with the settings apply
// would use.
type runSettings struct {
	Model    string // the argument
	Snapshot string // flag only
	Graph    string // flag only
	// HooksDirs are the hooks directories, in the order they are
	// searched; a list from a variable is split by resolve.
	HooksDirs []string
	// CacheDir is the package cache, resolved (by resolve) from
	// --cache-dir, --murano-config or the default.
	CacheDir string
	// MuranoConfig is murano-engine's configuration file, whose
	// package cache is used when set.
	MuranoConfig string
	OnDangling   string
	// NoHooks: run no hook at all and drop the doomed objects from the
	// model; without it, a run with no hook source is refused.
	NoHooks bool
	// RequireHooks: refuse to run when a doomed object has no destroy
	// hook.
	RequireHooks bool
	// hooksDirsFrom, cacheDirFrom and onDanglingFrom name where these
	// settings came from (config.from, "" for the default), for
	// messages: a saved plan fixes them, and a setting that contradicts
	// it is a usage error.
	hooksDirsFrom, cacheDirFrom, onDanglingFrom string
}

// addFlags declares the shared settings' flags, each bound to its
// field of s.
func (s *runSettings) addFlags(f *pflag.FlagSet) {
	addInputFlags(f, &s.Snapshot, &s.Graph)
	f.StringArrayVar(&s.HooksDirs, "hooks-dir", nil, "look for hooks in `DIR` (repeatable): DIR/CLASS/destroy, DIR/CLASS/notify/HANDLER")
	addCacheFlags(f, &s.CacheDir, &s.MuranoConfig)
	f.StringVar(&s.OnDangling, "on-dangling", "error", "references to doomed objects: error (apply refuses to run) or keep (destroy them and keep them flagged destroyed, which Murano 14's engine cannot load: executor.load fails in MuranoObject.set_property)")
	f.BoolVar(&s.RequireHooks, "require-hooks", false, "apply refuses to run when a doomed object has no destroy hook (a plan saved with --out records it)")
	f.BoolVar(&s.NoHooks, "no-hooks", false, "run no hook: apply drops the doomed objects from the model without destroying anything (a plan saved with --out records it; without it, with no hooks dir and no cached package for any doomed class, apply refuses)")
}

// addCacheFlags declares --cache-dir and --murano-config, the two
// settings that name the package cache, bound to dir and muranoConfig:
// plan and apply have them, and cache has them for its subcommands.
func addCacheFlags(f *pflag.FlagSet, dir, muranoConfig *string) {
	f.StringVar(dir, "cache-dir", "", "the package cache `DIR` (default <user cache dir>/objgc)")
	f.StringVar(muranoConfig, "murano-config", "", "read the package cache directory from murano-engine's `FILE` ([engine] packages_cache; not with --cache-dir)")
}

// resolve completes s from the configuration cfg built and the
// command's arguments: the model, the hooks dirs split where a variable
// gave them as one list, the package cache resolved (config.cacheDir),
// and where each of them came from.
func (s *runSettings) resolve(cfg *config, args []string) error {
	if len(args) == 1 {
		s.Model = args[0]
	}
	s.HooksDirs = splitList(s.HooksDirs)
	s.hooksDirsFrom = cfg.from("hooks-dir")
	s.onDanglingFrom = cfg.from("on-dangling")
	var err error
	s.CacheDir, s.cacheDirFrom, err = cfg.cacheDir(s.CacheDir, s.MuranoConfig)
	return err
}
