package enginetest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/objgc/objgc/internal/stresstest"
)

// TestEngineStress runs murano-engine's own ApiPackageLoader in several
// processes deploying from one cache, while the catalog re-uploads
// packages (a new id for the same FullName and version, so that the
// engine's cleanup of the other ids runs), and objgc, in processes of its
// own, prunes (every policy), lists, verifies, removes, migrates and adds
// on the same directory. A control run of the same length and the same
// engine load, without objgc, runs beside it on a cache of its own.
//
// It fails when, in the run with objgc:
//   - objgc removed a package a deployment held (orphaned locks
//     included), or left it so that it does not load. engine.py logs
//     every package directory the engine's loader deletes: the engine's
//     own cleanup removes held packages through orphaned locks, in the
//     control run too, and those are told apart;
//   - a kind of deployment failure shows more than 3n+3 times where the
//     control run shows it n times (the engine's own races fail
//     deployments at random);
//   - cache verify said a package does not load that loads once the
//     engines are idle, manifest and every class as a deployment loads
//     them (it read a package being unpacked: a false alarm); a package
//     the engine's own races damaged does not load for the engine
//     either, and is no false alarm (the race can leave the manifest and
//     lose class files: TestVerifyEngineRaceLeavesClassesMissing);
//   - an objgc command failed otherwise (any exit status but 0, or 3 for
//     a package in use);
//   - the run did not overlap: objgc removed no package, never met one in
//     use, or the catalog never re-uploaded.
//
// Length: OBJGC_ENGINE_STRESS=DURATION (CI runs 2m, .ci/run), else 4
// minutes under OBJGC_STRESS=1, else 10 seconds.
func TestEngineStress(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	requireMurano(t)
	stress, seed := stresstest.Mode(t)
	length := 10 * time.Second
	if stress {
		length = 4 * time.Minute
	}
	if s := os.Getenv("OBJGC_ENGINE_STRESS"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("OBJGC_ENGINE_STRESS=%q: want a duration such as 2m", s)
		}
		length = d
	}
	t.Logf("%s with objgc and %s without, side by side", length, length)
	dir := t.TempDir()
	zips := map[string]string{}
	for _, p := range []struct{ name, version string }{{"com.example.things", "1.0.0"}, {"com.example.things", "2.0.0"}, {"com.example.other", "1.0.0"}} {
		pk := thingsPackage(p.version)
		pk["manifest.yaml"] = strings.Replace(pk["manifest.yaml"], "com.example.things", p.name, 1)
		zips[p.name+"@"+p.version] = zipPackage(t, dir, p.name+"-"+p.version+".zip", pk)
	}
	withObjgc := &stressRun{t: t, cache: filepath.Join(dir, "objgc"), zips: zips, seed: seed, objgcRuns: map[string]int{}}
	control := &stressRun{t: t, cache: filepath.Join(dir, "control"), zips: zips, seed: seed + 1}
	// The engines start (Python imports Murano for seconds) before the
	// clock does.
	engines := map[*stressRun][]*engine{}
	for _, r := range []*stressRun{withObjgc, control} {
		for range 3 {
			engines[r] = append(engines[r], startEngine(t, r.cache, "ENGINE_RMTREE_LOG="+r.rmtreeLog()))
		}
	}
	var ready sync.WaitGroup
	for _, es := range engines {
		for _, e := range es {
			ready.Add(1)
			go func() {
				defer ready.Done()
				if a := e.do("arm none"); a != "armed" {
					t.Errorf("engine: %s", a)
				}
			}()
		}
	}
	ready.Wait()
	if t.Failed() {
		t.FailNow()
	}
	deadline := time.Now().Add(length)
	var wg sync.WaitGroup
	for _, r := range []*stressRun{withObjgc, control} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.engines(engines[r], deadline)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		withObjgc.objgcLoop(deadline)
	}()
	wg.Wait()

	t.Logf("with objgc: %d deployments, %d re-uploads, objgc %v", withObjgc.deployments, withObjgc.reuploads, withObjgc.objgcRuns)
	t.Logf("control: %d deployments, %d re-uploads", control.deployments, control.reuploads)
	// objgc removing what a deployment holds is a failure however often
	// the engine does it itself; the engine's own failures come at
	// random, so their counts are compared with a margin.
	for kind, n := range withObjgc.failures {
		c := control.failures[kind]
		switch {
		case strings.Contains(kind, "by objgc"):
			t.Errorf("%d× %s; first: %s", n, kind, withObjgc.first[kind])
		case n > 3*c+3:
			t.Errorf("with objgc, %d× %s, against %d× in the engine-only control run; first: %s", n, kind, c, withObjgc.first[kind])
		default:
			t.Logf("%d× %s, against %d× in the engine-only control run: the engine's own; first: %s", n, kind, c, withObjgc.first[kind])
		}
	}
	for kind, n := range control.failures {
		if withObjgc.failures[kind] == 0 {
			t.Logf("control run only: %d× %s; first: %s", n, kind, control.first[kind])
		}
	}
	for _, f := range withObjgc.objgcFailures {
		t.Error(f)
	}
	// A package verify said does not load must not load once the engines
	// are idle: one that loads then was read while being unpacked (a
	// false alarm). The engine's own races leave packages that really do
	// not load (one process deletes, without any lock, a package another
	// is unpacking, when it fails to load for it); the control cache is
	// verified too, to show it.
	e := engines[withObjgc][0]
	for _, dir := range withObjgc.notLoading {
		if !exists(dir) {
			continue // the engine deleted it: it did not load for the engine either
		}
		if a := e.do("loadclasses " + dir); strings.HasPrefix(a, "package ") {
			t.Errorf("cache verify said %s does not load; it loads: a false alarm (verify: %s)", dir, withObjgc.notLoadingWhy[dir])
		} else {
			t.Logf("cache verify found %s damaged, and it is: %s (verify: %s)", dir, a, withObjgc.notLoadingWhy[dir])
		}
	}
	code, out, errOut := objgc(t, nil, "cache", "verify", "--cache-dir", control.cache)
	t.Logf("cache verify of the engine-only control cache: exit %d\n%s%s", code, out, errOut)
	if withObjgc.objgcRuns["removed"] == 0 || withObjgc.objgcRuns["in use"] == 0 || withObjgc.reuploads == 0 || withObjgc.deployments < 20 {
		t.Errorf("the run did not overlap: objgc %v, %d re-uploads, %d deployments", withObjgc.objgcRuns, withObjgc.reuploads, withObjgc.deployments)
	}
}

// rmtreeLog is the file where the engines log the package directories
// they delete (engine.py, ENGINE_RMTREE_LOG).
func (r *stressRun) rmtreeLog() string { return r.cache + ".rmtree.log" }

// engineRemovals counts the deletions of dir the engines started and
// ended so far.
func (r *stressRun) engineRemovals(dir string) (started, ended int) {
	data, _ := os.ReadFile(r.rmtreeLog())
	for _, l := range strings.Split(string(data), "\n") {
		switch l {
		case "start " + dir:
			started++
		case "end " + dir:
			ended++
		}
	}
	return started, ended
}

// stressRun is one cache with its engine processes and catalog.
type stressRun struct {
	t     *testing.T
	cache string
	zips  map[string]string // FullName@version -> archive
	seed  uint64

	mu            sync.Mutex
	current       map[string]string // FullName@version -> the catalog's id now
	deployments   int
	reuploads     int
	failures      map[string]int    // kind -> count
	first         map[string]string // kind -> first occurrence
	objgcRuns     map[string]int
	objgcFailures []string
	notLoading    []string          // package directories cache verify said do not load
	notLoadingWhy map[string]string // package directory -> verify's line about it
}

func (r *stressRun) fail(kind, detail string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failures == nil {
		r.failures, r.first = map[string]int{}, map[string]string{}
	}
	if r.failures[kind] == 0 {
		r.first[kind] = detail
	}
	r.failures[kind]++
}

// pick returns the package a deployment loads: its FullName@version and
// the catalog's id for it, re-uploading it (a new id) one time in eight.
func (r *stressRun) pick(rng *rand.Rand) (key, id string) {
	keys := make([]string, 0, len(r.zips))
	for k := range r.zips {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	key = keys[rng.IntN(len(keys))]
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current == nil {
		r.current = map[string]string{}
	}
	if r.current[key] == "" || rng.IntN(8) == 0 {
		if r.current[key] != "" {
			r.reuploads++
		}
		r.current[key] = fmt.Sprintf("%032x", rng.Uint64())
	}
	return key, r.current[key]
}

// engines has the engine processes es deploy until deadline: each
// deployment loads one or two packages, holds them a few milliseconds,
// checks that what it holds is still there and loads, and ends.
func (r *stressRun) engines(es []*engine, deadline time.Time) {
	var wg sync.WaitGroup
	for p, e := range es {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(r.seed, uint64(p)))
			for d := 0; time.Now().Before(deadline); d++ {
				name := fmt.Sprintf("d%d", d)
				var held []string
				removals := map[string]int{}
				loaded := map[string]bool{}
				for range 1 + rng.IntN(2) {
					key, id := r.pick(rng)
					if loaded[key] {
						// A deployment loads a FullName and version once
						// (ApiPackageLoader keeps what it loaded).
						continue
					}
					loaded[key] = true
					fullName, version, _ := strings.Cut(key, "@")
					// Counted before the load: the engine may delete it
					// while the load takes its lock.
					_, before := r.engineRemovals(filepath.Join(r.cache, fullName, version, id))
					a := e.do(strings.Join([]string{"load", name, fullName, version, id, r.zips[key]}, " "))
					dir, ok := strings.CutPrefix(a, "loaded ")
					if !ok {
						kind, _, _ := strings.Cut(strings.TrimPrefix(a, "error "), " ")
						r.fail("deployment failed: "+kind, a)
						continue
					}
					held = append(held, dir)
					removals[dir] = before
				}
				time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
				for _, dir := range held {
					a := "package"
					if exists(dir) {
						a = e.do("loaddir " + dir)
					}
					if exists(dir) && strings.HasPrefix(a, "package ") {
						continue
					}
					// The engine's own races remove held packages too (a
					// deployment holding a lock on a file its cleanup
					// deleted); its loader logs what it deletes. A
					// deletion of the engine's that had not ended when the
					// load began explains it; else objgc did it.
					by := "objgc"
					if started, _ := r.engineRemovals(dir); started > removals[dir] {
						by = "the engine"
					}
					if exists(dir) {
						r.fail("package held by a deployment does not load, deleted by "+by, dir+": "+a)
					} else {
						r.fail("package removed by "+by+" while a deployment held it", dir)
					}
				}
				if a := e.do("end " + name); a != "ended" {
					r.fail("deployment did not end", a)
				}
				r.mu.Lock()
				r.deployments++
				r.mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// onlyNotLoading reports whether every line of verify's output is a
// package of the engine's that does not load.
func onlyNotLoading(out string) bool {
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(l, ": installed by the engine (no digests recorded), and it does not load") {
			return false
		}
	}
	return true
}

// objgcLoop runs objgc's cache commands on the cache, one after the
// other, until deadline.
func (r *stressRun) objgcLoop(deadline time.Time) {
	rng := rand.New(rand.NewPCG(r.seed, 99))
	added := zipPackage(r.t, r.t.TempDir(), "added.zip", thingsPackage("1.0.0"))
	commands := [][]string{
		{"cache", "prune", "--outdated", "--keep", "1"},
		{"cache", "prune", "--max-size", "0"},
		{"cache", "prune", "--unused-for", "1s"},
		{"cache", "prune", "--max-size", "1KiB", "--outdated", "--keep", "2"},
		{"cache", "list"},
		{"cache", "verify"},
		{"cache", "rm", "com.example.things@1.0.0"},
		{"cache", "rm", "com.example.other"},
		{"cache", "migrate"},
		{"cache", "add", added},
	}
	for time.Now().Before(deadline) {
		if !exists(r.cache) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		args := append(commands[rng.IntN(len(commands))], "--cache-dir", r.cache)
		code, out, errOut := objgc(r.t, nil, args...)
		what := strings.Join(args[:2], " ")
		r.mu.Lock()
		switch {
		case code == 3:
			r.objgcRuns["in use"]++
		case code == 1 && args[1] == "rm" && strings.Contains(errOut, "not in the package cache"):
		case code == 1 && args[1] == "verify" && onlyNotLoading(out):
			// Checked once the engines are idle (below).
		case code != 0:
			r.objgcFailures = append(r.objgcFailures, fmt.Sprintf("objgc %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut))
		}
		if args[1] == "verify" {
			for _, l := range strings.Split(out, "\n") {
				if dir, _, ok := strings.Cut(l, ": installed by the engine (no digests recorded), and it does not load"); ok {
					r.notLoading = append(r.notLoading, dir)
					if r.notLoadingWhy == nil {
						r.notLoadingWhy = map[string]string{}
					}
					r.notLoadingWhy[dir] = l
				}
			}
		}
		if (args[1] == "prune" || args[1] == "rm") && strings.Contains(out, "removed ") {
			r.objgcRuns["removed"]++
		}
		r.objgcRuns[what]++
		r.mu.Unlock()
		time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
	}
}
