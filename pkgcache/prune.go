package pkgcache

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/objgc/objgc/internal/lockfile"
)

// PruneOptions selects what Prune removes (docs/design.md, "The package
// cache"). At least one of Outdated, UnusedFor > 0 or LimitSize must be set.
type PruneOptions struct {
	// Outdated removes, per FullName, every version older than the Keep
	// newest ones (semantic order), and in the versions kept every id but
	// the most recently installed one (a re-uploaded package).
	Outdated bool
	Keep     int // versions kept per FullName by Outdated; values below 1 mean 1
	// UnusedFor removes packages whose last use (or install, if later) is
	// older than this. Zero disables the policy.
	UnusedFor time.Duration
	// LimitSize removes least recently used packages until the cache holds
	// at most MaxSize bytes (in-use packages still count).
	LimitSize bool
	MaxSize   int64
	// DryRun reports what would be removed and removes nothing.
	DryRun bool
	// Progress, when not nil, is called from Prune's goroutine after each
	// selected package is claimed or found in use (done of total), and
	// with done == total before Prune waits for the last deletions.
	Progress func(done, total int)
}

// Removal is one package Prune removed, would remove, or had to skip.
type Removal struct {
	Entry
	Reason string `json:"reason"` // e.g. "older version (keeping 1)", "outdated id", "unused for 41 days" (ageText), "cache over max size"
}

// CheckPolicy returns ErrNoPolicy when o selects nothing: none of
// Outdated, UnusedFor above zero or LimitSize. Prune calls it first; a
// command line calls it before opening the cache, so that a prune
// without a policy is refused whatever the cache.
func (o PruneOptions) CheckPolicy() error {
	if !o.Outdated && o.UnusedFor <= 0 && !o.LimitSize {
		return ErrNoPolicy
	}
	return nil
}

// PruneResult is what Prune did.
type PruneResult struct {
	DryRun  bool      `json:"dry_run"`
	Removed []Removal `json:"removed"` // removed, or would be with DryRun
	InUse   []Removal `json:"in_use"`  // selected but skipped: their usage lock is held
	// Kept, with DryRun only, is every package no policy selects, its
	// Reason saying why each policy keeps it ("one of the 2 newest
	// versions; last used 3 days ago").
	Kept []Removal `json:"kept,omitempty"`
	// PolicyMet is false when InUse is not empty: a package the policies
	// selected is still there (with MaxSize, the cache may still be over
	// the limit). Run the prune again once those packages are free.
	PolicyMet bool  `json:"policy_met"`
	Freed     int64 `json:"freed"` // bytes of Removed
	// Leftovers counts what killed processes left and Prune removed
	// (not with DryRun): .trash.* directories beside packages, staging
	// directories and downloads in tmp/.
	Leftovers int `json:"tmp_leftovers"`
	// Unclassified are the names under the root that are not packages,
	// lock files or objgc's own (links among them, never followed):
	// Prune leaves them, and with MaxSize counts their bytes, so that
	// PolicyMet is false while they alone keep the cache over the limit.
	Unclassified []Unclassified `json:"unclassified"`
	// OrphanedLocks says how packages held through a deleted usage lock
	// file were found: "checked in /proc: ..." or "not checked (why):
	// packages whose usage lock file is missing are kept" (docs/cache.md,
	// "Orphaned locks").
	OrphanedLocks string `json:"orphaned_locks"`
	// OrphansChecked is true when the process table could be read.
	OrphansChecked bool `json:"-"`
	// Warnings are said once per prune: that --unused-for could not
	// select the packages the engine unpacked, and why.
	Warnings []string `json:"warnings"`
}

// lockPrune takes locks/prune.lock exclusively without waiting: one prune
// or migration at a time. The error is ErrPruneRunning when another holds
// it, else one of the lock file, prefixed with doing.
func (c *Cache) lockPrune(doing string) (unlock func(), err error) {
	if err := c.mkdirAll(c.metaDir()); err != nil {
		return nil, fmt.Errorf("%s: %w", doing, err)
	}
	unlock, err = c.tryLockAt(c.pruneLockPath(), lockfile.Exclusive)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", doing, err)
	case unlock == nil:
		return nil, ErrPruneRunning
	}
	return unlock, nil
}

// Prune removes packages selected by opts. Only one prune runs at a time:
// it takes locks/prune.lock exclusively without waiting and returns
// ErrPruneRunning, having touched nothing, when another holds it. With
// DryRun it writes nothing at all (no lock, not .objgc/), whoever runs
// it, and reports what it would remove and, in Kept, what it keeps. It
// returns ErrNoPolicy when opts selects nothing. A selected package whose
// usage lock cannot be taken exclusively without waiting is in use: it is
// skipped and reported in InUse, and PolicyMet is false. When ctx ends,
// Prune claims no further package, finishes deleting those it claimed
// (whole packages only) and returns ctx's error with what it did so far.
// Removal renames the package directory to .trash.* beside it and then
// deletes it, so no reader ever sees a half-deleted package. Empty
// <FullName>/ directories are removed too, and so are the leftovers of
// killed adds and removals. A cache holding a package in the old layout is
// refused (ErrOldLayout) before anything is removed.
func (c *Cache) Prune(ctx context.Context, opts PruneOptions) (PruneResult, error) {
	res := PruneResult{DryRun: opts.DryRun}
	if err := opts.CheckPolicy(); err != nil {
		return res, err
	}
	if c.ownerErr != nil && !opts.DryRun {
		return res, c.ownerErr
	}
	// A dry run writes nothing, not even the prune lock (or .objgc/ for
	// it): it only reads, and what it reports is a listing of the
	// moment, as any listing is.
	if !opts.DryRun {
		unlock, err := c.lockPrune("pruning")
		if err != nil {
			return res, err
		}
		defer unlock()
	}
	c, closeHandles := c.withHandles(!opts.DryRun)
	defer closeHandles()

	// In-use flags are needed to count in-use packages against MaxSize and
	// to report a dry run; a real removal learns it from the lock itself.
	// --outdated alone needs the records of the packages it removes only.
	partial := opts.Outdated && opts.UnusedFor <= 0 && !opts.LimitSize && !opts.DryRun
	entries, other, err := c.list(ctx, opts.LimitSize || opts.DryRun, partial, !opts.DryRun, opts.LimitSize)
	if err != nil {
		return res, fmt.Errorf("pruning: %w", err)
	}
	res.Unclassified = other
	now := c.now()
	policy := opts.policy()
	for _, u := range other {
		policy.Unaccounted += u.Size
	}
	if opts.UnusedFor > 0 {
		// A dry run writes nothing: the mount flags alone.
		ok, slack, why := c.atimeTrust(!opts.DryRun)
		policy.EngineAtimeUntrusted, policy.EngineAtimeSlack = !ok, slack
		if n := countEngine(entries); !ok && n > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("--unused-for selects none of the %d %s murano-engine unpacked: %s, so objgc cannot tell when the engine last used %s; bound the cache with --outdated (older versions, re-uploaded ids) and --max-size (least recently used first, by objgc's own records of use)",
				n, map[bool]string{true: "package", false: "packages"}[n == 1], why, map[bool]string{true: "it", false: "them"}[n == 1]))
		}
	}
	plan := planPrune(entries, policy, now)
	if opts.DryRun {
		s := c.scanOrphans()
		res.OrphanedLocks, res.OrphansChecked = s.note(), s.complete
		res.Removed, res.InUse, res.Freed = plan.split()
		res.Kept = plan.kept
		res.PolicyMet = len(res.InUse) == 0 && !plan.over
		return res, ctx.Err()
	}

	ids := make([]string, len(plan.selected))
	for i, r := range plan.selected {
		ids[i] = r.ID
	}
	g := c.newUseGuard(ids)
	res.OrphanedLocks, res.OrphansChecked = g.scan.note(), g.scan.complete
	outs, err := c.claimAndDelete(ctx, g, plan.selected, opts.Progress)
	for k, o := range outs {
		e := o.entry
		r := Removal{Entry: e, Reason: plan.selected[k].Reason}
		switch {
		case o.removed:
			r.InUse, r.InUseReason = false, ""
			res.Removed = append(res.Removed, r)
			res.Freed += e.Size
		case o.inUse:
			r.InUse, r.InUseReason = true, o.busy
			res.InUse = append(res.InUse, r)
		}
	}
	res.PolicyMet = len(res.InUse) == 0 && !plan.over
	if err != nil {
		return res, err
	}
	res.Leftovers = c.cleanTmp(now) + c.removeTrash() + c.removeOrphanRecords(entries)
	return res, nil
}

// prunePolicy is the selection part of PruneOptions (see there).
type prunePolicy struct {
	Outdated  bool
	Keep      int
	UnusedFor time.Duration
	LimitSize bool
	MaxSize   int64
	// Unaccounted are the bytes under the root that are no package
	// (Unclassified): they count towards MaxSize and cannot be removed.
	Unaccounted int64
	// EngineAtimeUntrusted: access times do not show the engine's use
	// (atimeTrust), so UnusedFor selects no package the engine unpacked.
	// EngineAtimeSlack is how much older than its last use such a
	// package may look (a day under relatime): UnusedFor selects it only
	// when older than that much more.
	EngineAtimeUntrusted bool
	EngineAtimeSlack     time.Duration
}

// countEngine counts the packages the engine unpacked.
func countEngine(es []Entry) int {
	n := 0
	for _, e := range es {
		if e.InstalledBy == installedByEngine {
			n++
		}
	}
	return n
}

func (o PruneOptions) policy() prunePolicy {
	return prunePolicy{Outdated: o.Outdated, Keep: o.Keep, UnusedFor: o.UnusedFor, LimitSize: o.LimitSize, MaxSize: o.MaxSize}
}

// prunePlan is what a prune selected: each package once, in selection
// order (outdated first, then unused, then over size), with the reason of
// the first policy that selected it. A package whose Entry.InUse is true
// was in use when listed; the execution learns it again from the lock.
type prunePlan struct {
	selected []Removal
	// kept is every other package, in listing order, with why each
	// policy keeps it.
	kept []Removal
	// over: with LimitSize, the cache stays over MaxSize even once every
	// package selected is gone (unaccounted bytes keep it there).
	over bool
}

// split divides the plan as a dry run reports it: the packages free when
// listed (would be removed, with the bytes they would free) and those in
// use (would be skipped).
func (pl prunePlan) split() (removed, inUse []Removal, freed int64) {
	for _, r := range pl.selected {
		if r.InUse {
			inUse = append(inUse, r)
		} else {
			removed = append(removed, r)
			freed += r.Size
		}
	}
	return removed, inUse, freed
}

// planPrune selects what policy removes from packages (as List returns
// them; sorted here by FullName, version, install time and id), with now
// as the current time for UnusedFor. It touches no file: Prune runs it on
// a listing and then claims and deletes what it selected.
//
//   - Outdated: per FullName, every version older than the Keep newest
//     (Keep below 1 means 1; semantic order), and in the versions kept
//     every id but the most recently installed one.
//   - UnusedFor > 0: every package whose last use (or install, if later)
//     is more than UnusedFor before now.
//   - LimitSize: least recently used packages not in use until the rest
//     (in-use ones included) is at most MaxSize bytes; if in-use packages
//     still keep it over, they are selected too, least recently used
//     first, so that the caller learns the policy is not met.
func planPrune(packages []Entry, p prunePolicy, now time.Time) prunePlan {
	entries := append([]Entry(nil), packages...)
	sort.SliceStable(entries, func(a, b int) bool { return entryLess(entries[a], entries[b]) })
	reason := map[string]string{}    // id -> why it goes
	var order []int                  // indexes into entries, in selection order
	keepWhy := map[string][]string{} // id -> why each policy keeps it
	keepIt := func(i int, why string) { keepWhy[entries[i].ID] = append(keepWhy[entries[i].ID], why) }
	mark := func(i int, why string) {
		if _, ok := reason[entries[i].ID]; !ok {
			reason[entries[i].ID] = why
			order = append(order, i)
		}
	}
	if p.Outdated {
		keep := max(p.Keep, 1)
		// entries are sorted by FullName, version ascending, install time.
		for start := 0; start < len(entries); {
			end := start
			for end < len(entries) && entries[end].FullName == entries[start].FullName {
				end++
			}
			var versions []string
			for i := end - 1; i >= start; i-- {
				if len(versions) == 0 || versions[len(versions)-1] != entries[i].Version {
					versions = append(versions, entries[i].Version)
				}
			}
			kept := map[string]bool{}
			for j, v := range versions {
				if j < keep {
					kept[v] = true
				}
			}
			newest := map[string]int{} // version -> index of the most recently installed id
			for i := start; i < end; i++ {
				newest[entries[i].Version] = i // later = installed later
			}
			for i := start; i < end; i++ {
				e := entries[i]
				switch {
				case !kept[e.Version]:
					mark(i, fmt.Sprintf("older version (keeping %d)", keep))
				case newest[e.Version] != i:
					mark(i, "outdated id")
				case keep == 1:
					keepIt(i, "the newest version")
				default:
					keepIt(i, fmt.Sprintf("one of the %d newest versions", keep))
				}
			}
			start = end
		}
	}
	if p.UnusedFor > 0 {
		for i, e := range entries {
			age := now.Sub(e.lastUseOrInstalled())
			unused := age > p.UnusedFor
			if e.InstalledBy == installedByEngine {
				if p.EngineAtimeUntrusted {
					keepIt(i, "its last use by the engine is unknown (access times not kept)")
					continue
				}
				unused = age-p.EngineAtimeSlack > p.UnusedFor
			}
			if unused {
				mark(i, "unused for "+ageText(age))
			} else if e.LastUse.After(e.Installed) {
				keepIt(i, "last used "+ageText(age)+" ago")
			} else {
				keepIt(i, "installed "+ageText(age)+" ago")
			}
		}
	}
	over := false
	if p.LimitSize {
		total := p.Unaccounted
		var candidates []int
		for i, e := range entries {
			_, gone := reason[e.ID]
			if !gone || e.InUse {
				total += e.Size
			}
			if !gone && !e.InUse {
				candidates = append(candidates, i)
			}
		}
		sort.SliceStable(candidates, func(a, b int) bool {
			ea, eb := entries[candidates[a]], entries[candidates[b]]
			if ta, tb := ea.lastUseOrInstalled(), eb.lastUseOrInstalled(); !ta.Equal(tb) {
				return ta.Before(tb)
			}
			return entryLess(ea, eb)
		})
		for _, i := range candidates {
			if total <= p.MaxSize {
				break
			}
			mark(i, "cache over max size")
			total -= entries[i].Size
		}
		// Still over: the packages in use are what stands between the
		// cache and its limit. Select them too, least recently used
		// first, so that they are reported (InUse) and the caller learns
		// that the policy is not met, rather than a silent success.
		var busy []int
		for i, e := range entries {
			if _, gone := reason[e.ID]; !gone && e.InUse {
				busy = append(busy, i)
			}
		}
		sort.SliceStable(busy, func(a, b int) bool {
			return entries[busy[a]].lastUseOrInstalled().Before(entries[busy[b]].lastUseOrInstalled())
		})
		for _, i := range busy {
			if total <= p.MaxSize {
				break
			}
			mark(i, "cache over max size")
			total -= entries[i].Size
		}
		over = total > p.MaxSize
	}

	if p.LimitSize {
		for i := range entries {
			keepIt(i, "cache within --max-size")
		}
	}

	plan := prunePlan{selected: make([]Removal, 0, len(order)), over: over}
	for _, i := range order {
		plan.selected = append(plan.selected, Removal{Entry: entries[i], Reason: reason[entries[i].ID]})
	}
	for _, e := range entries {
		if _, gone := reason[e.ID]; !gone {
			plan.kept = append(plan.kept, Removal{Entry: e, Reason: strings.Join(keepWhy[e.ID], "; ")})
		}
	}
	return plan
}

// claimOutcome is what became of one selected package.
type claimOutcome struct {
	entry   Entry  // the package, its record read if list had not
	removed bool   // claimed, and deleted by the time claimAndDelete returns
	inUse   bool   // its usage lock is held: it stays
	busy    string // why it is in use when not for its lock (claim.busy)
	err     error  // claiming it failed
}

// deleteWorkers is how many packages are claimed and deleted at a time;
// the gain flattens beyond 8 on ext4 (docs/performance.md).
const deleteWorkers = 8

// claimAndDelete claims the packages selected (claimEntry) and
// deletes each one claimed, deleteWorkers at a time: each worker claims a
// package and deletes it, so that the claims (lock, rename) of some
// overlap the deletion of others, which on most disks is the slow part.
// progress, when not nil, is called from the caller's goroutine after
// each claim (done of total), and once with done == total before the last
// deletions are waited for. When ctx ends no further package is claimed;
// those claimed are still deleted, and the outcomes of the packages never
// tried are zero. The error is ctx's, or the first claim error in order.
//
// The <FullName>/<version>/ and <FullName>/ directories a removal leaves
// empty stay: the engine creates them with os.makedirs before it unpacks
// an id into them, and an rmdir between its mkdir of <version>/ and that
// of <id>/ would fail its unpack; no lock of the engine's covers them.
func (c *Cache) claimAndDelete(ctx context.Context, g *useGuard, selected []Removal, progress func(done, total int)) ([]claimOutcome, error) {
	outs := make([]claimOutcome, len(selected))
	type claimed struct {
		k int
		o claimOutcome
	}
	jobs := make(chan int)
	results := make(chan claimed, len(selected))
	var wg sync.WaitGroup
	for range min(deleteWorkers, len(selected)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				e := selected[k].Entry
				if e.partial {
					if full, err := c.entryInfo(nil, e.FullName, e.Version, e.ID, false); err == nil {
						e = full
					}
				}
				cl, err := c.claimEntry(g, e.FullName, e.Version, e.ID, e.InstalledBy)
				results <- claimed{k, claimOutcome{entry: e, removed: cl.ok, inUse: err == nil && !cl.ok && (cl.busy != "" || c.isDir(e.Dir)), busy: cl.busy, err: err}}
				if cl.ok {
					c.removeAll(cl.trash)
				}
			}
		}()
	}
	sent, got := 0, 0
	done, stopped := ctx.Done(), false
	for got < sent || !stopped && sent < len(selected) {
		var send chan int
		if !stopped && sent < len(selected) {
			send = jobs
		}
		select {
		case send <- sent:
			sent++
		case r := <-results:
			outs[r.k] = r.o
			got++
			if progress != nil && got < len(selected) {
				progress(got, len(selected))
			}
		case <-done: // claim no more; collect what was sent
			stopped, done = true, nil
		}
	}
	close(jobs)
	if progress != nil && len(selected) > 0 && got == len(selected) {
		progress(got, len(selected))
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return outs, err
	}
	for _, o := range outs {
		if o.err != nil {
			return outs, fmt.Errorf("pruning: %w", o.err)
		}
	}
	return outs, nil
}

// removeTrash deletes what is in .objgc/trash/: packages whose removal
// a killed process left unfinished, and those a running removal is
// deleting (deleting the same files at the same time is harmless). It
// returns how many it removed.
func (c *Cache) removeTrash() int {
	names, err := c.readDirNames(c.trashDir())
	if err != nil {
		return 0
	}
	n := 0
	for _, name := range names {
		if c.removeAll(filepath.Join(c.trashDir(), name)) == nil {
			n++
		}
	}
	return n
}

// removeOrphanRecords removes the records and last-use markers of ids no
// package has any more, and records that describe another place than
// their id's package: the engine's cleanup removed the package (it does
// not know objgc's records), or an add was killed between writing the
// record and renaming the package into place. A record is removed only
// holding its id's usage lock exclusively (taken without waiting): an
// add writes the record and renames the package holding it shared. The
// id's lock files stay, as after any removal (claimEntry). listed are
// the packages the prune listed: only the records of other ids are looked
// at (a package added since is found by its directory, and kept).
func (c *Cache) removeOrphanRecords(listed []Entry) int {
	// A listed package the engine unpacked has no record that describes
	// it: a record of its id describes another place, is not believed,
	// and goes too.
	ids := make(map[string]bool, len(listed))
	engine := map[string]Entry{}
	for _, e := range listed {
		ids[e.ID] = true
		if e.InstalledBy == installedByEngine {
			engine[e.ID] = e
		}
	}
	n := 0
	names, _ := c.readDirNames(c.recordsDir())
	for _, name := range names {
		id, ok := strings.CutSuffix(name, ".json")
		e, isEngine := engine[id]
		if !ok || !idRE.MatchString(id) || ids[id] && !isEngine {
			continue
		}
		unlock, err := c.tryLockAt(c.usageLockPath(id), lockfile.Exclusive)
		if err != nil || unlock == nil {
			continue
		}
		rec, err := c.readRecordHeader(id)
		stale := err == nil && (rec.ID != id || !validFullName(rec.FullName) || !safeComponent(rec.Version, versionRE) || !c.isDir(c.entryDir(rec.FullName, rec.Version, id)))
		if isEngine {
			stale = err == nil && !rec.matches(e.FullName, e.Version, id)
		}
		if stale {
			if c.remove(c.recordPath(id)) == nil {
				n++
			}
			if !isEngine { // the engine's package keeps its marker
				c.remove(c.lastUsePath(id))
			}
		}
		unlock()
	}
	return n
}

// cleanTmp removes what killed processes left in .objgc/tmp/: a staging
// directory <id>.stage.* whose download lock is free, and a dl.* archive
// older than a minute whose own lock is free. It returns how many it
// removed.
func (c *Cache) cleanTmp(now time.Time) int {
	names, err := c.readDirNames(c.tmpDir())
	if err != nil {
		return 0
	}
	n := 0
	for _, name := range names {
		p := filepath.Join(c.tmpDir(), name)
		var unlock func()
		switch {
		case strings.HasPrefix(name, "dl."):
			st, err := c.lstat(p)
			if err != nil || now.Sub(st.ModTime()) < time.Minute {
				continue
			}
			unlock, err = c.tryLockAt(p, lockfile.Exclusive)
			if err != nil {
				continue
			}
		default:
			id, _, ok := strings.Cut(name, ".stage.")
			if !ok || !idRE.MatchString(id) {
				continue
			}
			unlock, err = c.tryLockAt(c.downloadLockPath(id), lockfile.Exclusive)
			if err != nil {
				continue
			}
		}
		if unlock == nil {
			continue
		}
		if c.removeAll(p) == nil {
			n++
		}
		unlock()
	}
	return n
}

// RemoveResult is what Remove did.
type RemoveResult struct {
	Removed []Entry `json:"removed"`
	InUse   []Entry `json:"in_use"` // matched, but in use: they stay (Entry.InUseReason says why when not for the lock)
	Freed   int64   `json:"freed"`  // bytes of Removed
	// OrphanedLocks is as in PruneResult.
	OrphanedLocks string `json:"orphaned_locks"`
}

// Remove removes the packages ref names: a package id (whole, or its
// first 12 characters or more, as cache list shows it), a
// FullName (every version and id of it), or FullName@version (every id of
// that version). Each goes as in a prune: its usage lock taken
// exclusively without waiting, one rename out of the engine's sight, then
// the deletion; a package in use (by objgc or the engine) stays and is
// returned in InUse. The error wraps ErrNotFound when ref names no cached
// package.
func (c *Cache) Remove(ctx context.Context, ref string) (RemoveResult, error) {
	res := RemoveResult{}
	if c.ownerErr != nil {
		return res, c.ownerErr
	}
	fullName, version, byVersion := strings.Cut(ref, "@")
	entries, _, err := c.list(ctx, false, false, false, false)
	if err != nil {
		return res, err
	}
	var matched []Entry
	for _, e := range entries {
		if e.ID == ref || len(ref) >= 12 && strings.HasPrefix(e.ID, ref) || e.FullName == fullName && (!byVersion || e.Version == version) {
			matched = append(matched, e)
		}
	}
	if len(matched) == 0 {
		return res, fmt.Errorf("%s: %w", ref, ErrNotFound)
	}
	ids := make([]string, len(matched))
	for i, e := range matched {
		ids[i] = e.ID
	}
	g := c.newUseGuard(ids)
	res.OrphanedLocks = g.scan.note()
	for _, e := range matched {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		cl, err := c.claimEntry(g, e.FullName, e.Version, e.ID, e.InstalledBy)
		switch {
		case err != nil:
			return res, fmt.Errorf("removing %s: %w", e.Dir, err)
		case cl.ok:
			c.removeAll(cl.trash)
			res.Removed = append(res.Removed, e)
			res.Freed += e.Size
		case cl.busy != "" || c.isDir(e.Dir):
			e.InUse, e.InUseReason = true, cl.busy
			res.InUse = append(res.InUse, e)
		}
	}
	return res, nil
}

// ageText is a package's time since last use (or install) as prune's
// reason gives it: the largest whole unit of days, hours, minutes and
// seconds, rounded down, with the next smaller unit when that is not zero,
// except from 10 days on ("41 days", "3 days 4 hours", "1 hour 30
// minutes"). Whole days are all the precision an old last use has
// (objgc's marker moves hourly, an access time under relatime daily); the
// second unit keeps a short age from reading as less than the
// --unused-for that selected it.
func ageText(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	units := []struct {
		size      time.Duration
		one, many string
	}{{24 * time.Hour, "day", "days"}, {time.Hour, "hour", "hours"}, {time.Minute, "minute", "minutes"}, {time.Second, "second", "seconds"}}
	count := func(n int64, i int) string {
		if n == 1 {
			return "1 " + units[i].one
		}
		return fmt.Sprintf("%d %s", n, units[i].many)
	}
	for i, u := range units[:len(units)-1] {
		n := int64(d / u.size)
		if n == 0 {
			continue
		}
		s := count(n, i)
		if m := int64(d % u.size / units[i+1].size); m > 0 && (i > 0 || n < 10) {
			s += " " + count(m, i+1)
		}
		return s
	}
	return count(int64(d/time.Second), len(units)-1)
}
