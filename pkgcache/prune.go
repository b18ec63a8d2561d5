package pkgcache

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// PruneOptions selects what Prune removes (DESIGN.md section 8). At least
// one of Outdated, UnusedFor > 0 or LimitSize must be set.
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
	Reason string `json:"reason"` // e.g. "older version (keeping 1)", "outdated id", "unused for 720h0m0s", "cache over max size"
}

// PruneResult is what Prune did.
type PruneResult struct {
	DryRun  bool      `json:"dry_run"`
	Removed []Removal `json:"removed"` // removed, or would be with DryRun
	InUse   []Removal `json:"in_use"`  // selected but skipped: their usage lock is held
	// PolicyMet is false when InUse is not empty: a package the policies
	// selected is still there (with MaxSize, the cache may still be over
	// the limit). Run the prune again once those packages are free.
	PolicyMet bool  `json:"policy_met"`
	Freed     int64 `json:"freed"` // bytes of Removed
	// Leftovers counts staging and trash entries of killed processes
	// removed from tmp/ (not with DryRun).
	Leftovers int `json:"tmp_leftovers"`
}

// Prune removes packages selected by opts. Only one prune runs at a time:
// it takes locks/prune.lock exclusively without waiting and returns
// ErrPruneRunning, having touched nothing, when another holds it. It
// returns ErrNoPolicy when opts selects nothing. A selected package whose
// usage lock cannot be taken exclusively without waiting is in use: it is
// skipped and reported in InUse. Removal renames the package directory into
// tmp/ and then deletes it, so packages/ never holds a half-deleted package.
// Empty <FullName>/<version>/ directories are removed too, and so are the
// leftovers of killed adds and removals in tmp/.
func (c *Cache) Prune(ctx context.Context, opts PruneOptions) (PruneResult, error) {
	res := PruneResult{DryRun: opts.DryRun}
	if !opts.Outdated && opts.UnusedFor <= 0 && !opts.LimitSize {
		return res, ErrNoPolicy
	}
	unlock, err := tryLockExclusive(c.lockPath("prune.lock"))
	if err != nil {
		return res, fmt.Errorf("pruning: %w", err)
	}
	if unlock == nil {
		return res, ErrPruneRunning
	}
	defer unlock()

	// In-use flags are needed to count in-use packages against MaxSize and
	// to report a dry run; a real removal learns it from the lock itself.
	entries, err := c.list(ctx, opts.LimitSize || opts.DryRun)
	if err != nil {
		return res, fmt.Errorf("pruning: %w", err)
	}
	reason := map[string]string{} // id -> why it goes
	var order []int               // indexes into entries, in selection order
	mark := func(i int, why string) {
		if _, ok := reason[entries[i].ID]; !ok {
			reason[entries[i].ID] = why
			order = append(order, i)
		}
	}
	if opts.Outdated {
		keep := max(opts.Keep, 1)
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
				}
			}
			start = end
		}
	}
	now := c.now()
	if opts.UnusedFor > 0 {
		for i, e := range entries {
			if now.Sub(e.lastUseOrInstalled()) > opts.UnusedFor {
				mark(i, "unused for "+opts.UnusedFor.String())
			}
		}
	}
	if opts.LimitSize {
		var total int64
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
			if total <= opts.MaxSize {
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
			if total <= opts.MaxSize {
				break
			}
			mark(i, "cache over max size")
			total -= entries[i].Size
		}
	}

	// Claimed packages are deleted while the next ones are claimed: on
	// most disks deleting is the slow part (docs/performance.md).
	trash := newDeleter()
	defer trash.wait()
	for k, i := range order {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if opts.Progress != nil && k > 0 && !opts.DryRun {
			opts.Progress(k, len(order))
		}
		e := entries[i]
		r := Removal{Entry: e, Reason: reason[e.ID]}
		if opts.DryRun {
			if e.InUse {
				res.InUse = append(res.InUse, r)
			} else {
				res.Removed = append(res.Removed, r)
				res.Freed += e.Size
			}
			continue
		}
		dir, ok, err := c.claimEntry(e.FullName, e.Version, e.ID)
		if err != nil {
			return res, fmt.Errorf("pruning: %w", err)
		}
		if !ok {
			if isDir(e.Dir) {
				r.InUse = true
				res.InUse = append(res.InUse, r)
			}
			continue
		}
		r.InUse = false
		trash.add(dir, filepath.Join(c.packagesDir(), e.FullName, e.Version))
		res.Removed = append(res.Removed, r)
		res.Freed += e.Size
	}
	res.PolicyMet = len(res.InUse) == 0
	if !opts.DryRun {
		if opts.Progress != nil && len(order) > 0 {
			opts.Progress(len(order), len(order))
		}
		trash.wait()
		res.Leftovers = c.cleanTmp(now)
	}
	return res, nil
}

// deleter deletes claimed packages in the background, deleteWorkers at
// a time (the gain flattens beyond that on ext4, measured), each followed
// by its version and FullName directories when they are left empty.
type deleter struct {
	next chan [2]string // trash, version directory
	wg   sync.WaitGroup
	once sync.Once
}

const deleteWorkers = 8

func newDeleter() *deleter {
	d := &deleter{next: make(chan [2]string, 64)}
	for range deleteWorkers {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			for job := range d.next {
				os.RemoveAll(job[0])
				// os.Remove fails on a directory that is not empty:
				// that is the check. An adder that loses this race
				// retries MkdirAll.
				if os.Remove(job[1]) == nil {
					os.Remove(filepath.Dir(job[1]))
				}
			}
		}()
	}
	return d
}

// add queues trash for deletion, then versionDir if it is left empty.
func (d *deleter) add(trash, versionDir string) { d.next <- [2]string{trash, versionDir} }

// wait returns once every queued directory is deleted; add may not be
// called after it.
func (d *deleter) wait() {
	d.once.Do(func() { close(d.next) })
	d.wg.Wait()
}

// cleanTmp removes what killed processes left in tmp/: a staging directory
// <id>.stage.* whose download lock is free, a trash directory
// <id>.trash.* whose usage lock is free, and a dl.* archive older than a
// minute whose own lock is free. It returns how many it removed.
func (c *Cache) cleanTmp(now time.Time) int {
	names, err := readDirNames(c.tmpDir())
	if err != nil {
		return 0
	}
	n := 0
	for _, name := range names {
		p := filepath.Join(c.tmpDir(), name)
		var lockPath string
		switch {
		case strings.HasPrefix(name, "dl."):
			st, err := os.Stat(p)
			if err != nil || now.Sub(st.ModTime()) < time.Minute {
				continue
			}
			lockPath = p
		case len(name) > 64 && idRE.MatchString(name[:64]) && strings.HasPrefix(name[64:], ".stage."):
			lockPath = c.lockPath(name[:64] + ".download")
		case len(name) > 64 && idRE.MatchString(name[:64]) && strings.HasPrefix(name[64:], ".trash."):
			lockPath = c.lockPath(name[:64] + ".usage")
		default:
			continue
		}
		unlock, err := tryLockExclusive(lockPath)
		if err != nil || unlock == nil {
			continue
		}
		if os.RemoveAll(p) == nil {
			n++
		}
		unlock()
	}
	return n
}
