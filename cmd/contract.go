package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/pkgcache"
)

// stdinName is the name a document read from standard input goes by.
const stdinName = "<stdin>"

// maxDifferences is how many differences a stale-plan or --require-hooks
// message names before it says how many more there are.
const maxDifferences = 5

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

// fileSHA256 returns the lower-case hex sha256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hookSums hashes hook files, each once however many objects share it.
type hookSums struct {
	mu sync.Mutex
	m  map[string]string
}

func newHookSums() *hookSums { return &hookSums{m: map[string]string{}} }

// planHook returns f as a plan lists it, with the sha256 of its content
// ("" when it cannot be read; Error then says why if the lookup had not).
func (s *hookSums) planHook(f hook.Found) planHook {
	h := planHook{Event: f.Event, Class: f.Class, Path: f.Path}
	if f.Err != nil {
		h.Error = f.Err.Error()
	}
	s.mu.Lock()
	sum, ok := s.m[f.Path]
	s.mu.Unlock()
	if !ok {
		var err error
		if sum, err = fileSHA256(f.Path); err != nil && h.Error == "" {
			h.Error = err.Error()
		}
		s.mu.Lock()
		s.m[f.Path] = sum
		s.mu.Unlock()
	}
	h.SHA256 = sum
	return h
}

// sessionPackages lists the packages a session read.
func sessionPackages(s *pkgcache.Session) []planPackage {
	out := []planPackage{}
	if s == nil {
		return out
	}
	for _, p := range s.Packages() {
		out = append(out, planPackage{FullName: p.FullName, Version: p.Version, ID: p.ID})
	}
	return out
}

// settingFrom names where the setting of flag came from, for messages:
// "--FLAG" for the flag, the variable's name for the environment, "KEY in
// FILE" for the configuration file, "" when the default is used. The
// precedence is viper's: flag, then variable, then file.
func settingFrom(c *cobra.Command, v *viper.Viper, getenv func(string) string, flag string) string {
	key, env := settingOf(c, flag)
	switch {
	case c.Flags().Changed(flag):
		return "--" + flag
	case getenv(env) != "":
		return env
	case v.InConfig(viperKey(flag)):
		return key + " in " + v.ConfigFileUsed()
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

// staleError is the exit-5 error of a saved plan that no longer holds:
// it names the first differences and how many more there are.
func staleError(planFile string, diffs []string) error {
	shown := diffs
	more := ""
	if len(diffs) > maxDifferences {
		shown = diffs[:maxDifferences]
		more = fmt.Sprintf("; and %d more", len(diffs)-maxDifferences)
	}
	return &exitError{code: ExitStalePlan, err: fmt.Errorf("plan %s is stale: %s%s; plan again", planFile, strings.Join(shown, "; "), more)}
}

// checkPlanInputs compares the sha256 of each input of a saved plan with
// the file now, before the lock: a plan that is stale already is refused
// without touching anything. (The inputs are compared again once the lock
// is held, for a change made while apply waited for it.)
func checkPlanInputs(sp *planDocument) []string {
	var diffs []string
	for _, in := range sp.Inputs {
		sum, err := fileSHA256(in.Path)
		switch {
		case os.IsNotExist(err):
			diffs = append(diffs, fmt.Sprintf("%s no longer exists", in.Path))
		case err != nil:
			diffs = append(diffs, fmt.Sprintf("%s cannot be read: %v", in.Path, err))
		case sum != in.SHA256:
			diffs = append(diffs, fmt.Sprintf("%s changed since it was planned (sha256 %s, now %s)", in.Path, short(in.SHA256), short(sum)))
		}
	}
	return diffs
}

// checkPlanHooks looks up now, in the plan's hooks dirs and package cache,
// every hook the saved plan lists, and returns the finder (its session,
// holding the usage locks of the packages read, is finder.Packages) with
// the differences: hooks dirs gone, hooks added, removed or changed,
// packages replaced, added or gone. The finder remembers what it found:
// apply runs with it, so it runs exactly the hooks compared here.
func checkPlanHooks(ctx context.Context, streams *IO, sp *planDocument) (*destroy.HookFinder, []string) {
	var diffs []string
	for _, d := range sp.HooksDirs {
		st, err := os.Stat(d)
		switch {
		case os.IsNotExist(err):
			diffs = append(diffs, fmt.Sprintf("hooks dir %s no longer exists", d))
		case err != nil:
			diffs = append(diffs, fmt.Sprintf("hooks dir %s cannot be read: %v", d, err))
		case !st.IsDir():
			diffs = append(diffs, fmt.Sprintf("hooks dir %s is no longer a directory", d))
		}
	}
	finder := &destroy.HookFinder{Dirs: sp.HooksDirs}
	if session := openPackages(streams, sp.CacheDir); session != nil {
		finder.Packages = session
	}
	if len(diffs) > 0 {
		return finder, diffs
	}
	sums := newHookSums()
	var hookDiffs []string
	for _, g := range sp.Groups {
		for _, o := range g.Objects {
			var now []planHook
			for _, f := range finder.DestroyHooks(ctx, o.TypeRef.snapshotType()) {
				now = append(now, sums.planHook(f))
			}
			hookDiffs = append(hookDiffs, compareHooks(o.Hooks, now)...)
		}
	}
	for _, n := range sp.Notifications {
		var planned, now []planHook
		if n.Hook != nil {
			planned = []planHook{*n.Hook}
		}
		if n.SubscriberTypeRef != nil {
			if found, ok := finder.HandlerHook(ctx, n.SubscriberTypeRef.snapshotType(), n.Handler); ok {
				now = []planHook{sums.planHook(found)}
			}
		}
		hookDiffs = append(hookDiffs, compareHooks(planned, now)...)
	}
	pkgDiffs := comparePackages(sp.Packages, sessionPackages(finder.Packages))
	if len(pkgDiffs) > 0 {
		// A replaced package moves its hooks: the package is the news.
		inCache := filepath.Join(sp.CacheDir, "packages") + string(filepath.Separator)
		hookDiffs = slices.DeleteFunc(hookDiffs, func(d string) bool { return strings.HasPrefix(d, "hook "+inCache) })
	}
	diffs = append(diffs, pkgDiffs...)
	return finder, dedupe(append(diffs, hookDiffs...))
}

// compareHooks returns how the hooks found now for one object or
// notification differ from the planned ones: added, removed, changed
// content (sha256), able or unable to run, or run in another order.
func compareHooks(planned, now []planHook) []string {
	var diffs []string
	was := make(map[string]planHook, len(planned))
	for _, h := range planned {
		was[h.Path] = h
	}
	is := make(map[string]bool, len(now))
	for _, h := range now {
		is[h.Path] = true
		p, ok := was[h.Path]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("hook %s was added since it was planned", h.Path))
		case p.SHA256 != h.SHA256:
			diffs = append(diffs, fmt.Sprintf("hook %s changed since it was planned (sha256 %s, now %s)", h.Path, short(orNone(p.SHA256)), short(orNone(h.SHA256))))
		case p.Error == "" && h.Error != "":
			diffs = append(diffs, fmt.Sprintf("hook %s can no longer run (%s)", h.Path, h.Error))
		case p.Error != "" && h.Error == "":
			diffs = append(diffs, fmt.Sprintf("hook %s can run now (when planned: %s)", h.Path, p.Error))
		}
	}
	for _, h := range planned {
		if !is[h.Path] {
			diffs = append(diffs, fmt.Sprintf("hook %s was removed since it was planned", h.Path))
		}
	}
	if len(diffs) == 0 && len(planned) == len(now) {
		for k := range now {
			if planned[k].Path != now[k].Path {
				diffs = append(diffs, fmt.Sprintf("hooks %s and %s run in another order than planned", planned[k].Path, now[k].Path))
				break
			}
		}
	}
	return diffs
}

// comparePackages returns how the cached packages read now differ from
// those a plan read: replaced (same FullName and version, another id),
// gone, or read now and not then.
func comparePackages(planned, now []planPackage) []string {
	type nv struct{ name, version string }
	ids := func(ps []planPackage) (map[nv][]string, []nv) {
		m := map[nv][]string{}
		var order []nv
		for _, p := range ps {
			k := nv{p.FullName, p.Version}
			if _, ok := m[k]; !ok {
				order = append(order, k)
			}
			m[k] = append(m[k], p.ID)
		}
		return m, order
	}
	was, wasOrder := ids(planned)
	is, isOrder := ids(now)
	var diffs []string
	for _, k := range wasOrder {
		nowIDs, ok := is[k]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("package %s %s (id %s) is no longer in the cache", k.name, k.version, short(was[k][0])))
		case strings.Join(was[k], ",") != strings.Join(nowIDs, ","):
			diffs = append(diffs, fmt.Sprintf("package %s %s was replaced (id %s, now %s)", k.name, k.version, shortList(was[k]), shortList(nowIDs)))
		}
	}
	for _, k := range isOrder {
		if _, ok := was[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("package %s %s (id %s) is used now and was not when planned", k.name, k.version, short(is[k][0])))
		}
	}
	return diffs
}

func shortList(ids []string) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = short(id)
	}
	return strings.Join(s, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func dedupe(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
