package pkgcache

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/objgc/objgc/internal/lockfile"
)

// Session is what plan and apply use to read packages from the cache: it
// resolves packages and classes to unpacked package directories and holds
// the usage lock of every package it returned until Close (docs/design.md,
// "The package cache": the usage lock is held for the whole run). A Session
// is safe for concurrent use.
type Session struct {
	c      *Cache
	mu     sync.Mutex
	held   map[string]func()   // id -> unlock
	pkgs   map[string]*Package // id -> loaded package
	closed bool
}

// NewSession starts a session. Close it when the run ends.
func (c *Cache) NewSession() *Session {
	return &Session{c: c, held: map[string]func(){}, pkgs: map[string]*Package{}}
}

// Close releases every usage lock the session holds. Packages it returned
// must not be read afterwards.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, unlock := range s.held {
		unlock()
	}
	s.held, s.pkgs, s.closed = map[string]func(){}, map[string]*Package{}, true
}

// Package returns the cached package fullName at version (the highest
// cached version when version is ""; the most recently installed id of
// it), loaded, with its usage lock held until Close. The error wraps
// ErrNotFound when the cache has no such package, ErrLocked when ctx ends
// while waiting for the usage lock (only a running removal holds it
// exclusively, briefly).
func (s *Session) Package(ctx context.Context, fullName, version string) (*Package, error) {
	// Lock, then check: a prune may remove the entry between the lookup
	// and the lock; look again then.
	for attempt := 0; ; attempt++ {
		e, err := s.c.newest(fullName, version)
		if err != nil {
			return nil, err
		}
		p, err := s.hold(ctx, e)
		if err == nil || !errors.Is(err, ErrNotFound) || attempt == 5 {
			return p, err
		}
	}
}

// hold takes e's usage lock (once per session), checks that e still
// exists and loads it.
func (s *Session) hold(ctx context.Context, e Entry) (*Package, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("package cache session is closed")
	}
	if p, ok := s.pkgs[e.ID]; ok {
		s.mu.Unlock()
		return p, nil
	}
	s.mu.Unlock()
	unlock, err := s.c.acquireUsage(ctx, e.ID)
	if err != nil {
		return nil, err
	}
	if e.InstalledBy == installedByEngine {
		// The engine unpacks in place (makedirs, then extractall) under
		// its exclusive download lock: wait for a running unpack to end
		// before reading what it writes.
		unlockDL, err := s.c.lockAt(ctx, s.c.downloadLockPath(e.ID), lockfile.Shared)
		if err != nil {
			unlock()
			return nil, err
		}
		unlockDL()
	}
	if !s.c.isDir(e.Dir) {
		unlock()
		return nil, fmt.Errorf("package %s %s (%s) was removed: %w", e.FullName, e.Version, e.ID, ErrNotFound)
	}
	p, err := s.c.loadEntry(ctx, e.Dir)
	if err != nil {
		unlock()
		return nil, err
	}
	p.ID, p.InstalledBy = e.ID, e.InstalledBy
	// Only the operator's packages run their hooks: one the engine
	// unpacked came from the catalog, which tenants upload to, and
	// Murano runs package scripts in the tenant's VMs, never on the
	// engine host.
	p.RunsHooks = e.InstalledBy == installedByObjgc
	if p.RunsHooks {
		rec, err := s.c.readRecord(e.ID)
		if err != nil || rec.FullName != e.FullName || rec.Version != e.Version {
			unlock()
			return nil, fmt.Errorf("package %s %s (%s): its digests record: %v", e.FullName, e.Version, e.ID, err)
		}
		p.digests = rec.Files
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if q, ok := s.pkgs[e.ID]; ok { // another goroutine won
		unlock()
		return q, nil
	}
	s.held[e.ID] = unlock
	s.pkgs[e.ID] = p
	return p, nil
}

// RecordedSHA256 returns the sha256 recorded at cache add for the file at
// path, when path is in a package objgc added that the session holds
// (Package.RecordedSHA256); false otherwise.
func (s *Session) RecordedSHA256(path string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pkgs {
		if sum, ok := p.RecordedSHA256(path); ok {
			return sum, true
		}
	}
	return "", false
}

// Packages returns every package the session holds (every package it
// returned: those a plan or an apply read), ordered by FullName, version
// and id. A saved plan records them, so that apply can tell a package
// replaced since (docs/design.md, "The plan").
func (s *Session) Packages() []*Package {
	s.mu.Lock()
	out := make([]*Package, 0, len(s.pkgs))
	for _, p := range s.pkgs {
		out = append(out, p)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.FullName != b.FullName {
			return a.FullName < b.FullName
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.ID < b.ID
	})
	return out
}

// FindClass returns the package that defines class, with its usage lock held
// until Close. The arguments are the parts of an object's type string
// `name/version@package` (docs/design.md, "The object model"): with pkg, the
// package pkg at version (its highest cached version when version is "")
// must define class; without pkg, any cached package defining class is
// taken, the one at version if given, else the highest version (ties:
// FullName order). Versions match exactly. The error wraps ErrNotFound when
// no cached package defines class.
func (s *Session) FindClass(ctx context.Context, class, version, pkg string) (*Package, error) {
	if pkg != "" {
		p, err := s.Package(ctx, pkg, version)
		if err != nil {
			return nil, fmt.Errorf("class %s: %w", class, err)
		}
		if _, ok := p.classes[class]; !ok {
			return nil, fmt.Errorf("class %s: package %s %s does not define it: %w", class, p.FullName, p.Version, ErrNotFound)
		}
		return p, nil
	}
	for attempt := 0; ; attempt++ {
		e, err := s.c.findDefiner(class, version)
		if err != nil {
			return nil, err
		}
		p, err := s.hold(ctx, e)
		if err == nil || !errors.Is(err, ErrNotFound) || attempt == 5 {
			return p, err
		}
	}
}

// findDefiner scans the manifests of the newest id of every cached
// FullName/version for class.
func (c *Cache) findDefiner(class, version string) (Entry, error) {
	keys, err := c.scan()
	if err != nil {
		return Entry{}, err
	}
	type fv struct{ fullName, version string }
	seen := map[fv]bool{}
	var found []Entry
	for _, k := range keys {
		if version != "" && k.version != version || seen[fv{k.fullName, k.version}] {
			continue
		}
		seen[fv{k.fullName, k.version}] = true
		e, err := c.newest(k.fullName, k.version)
		if err != nil {
			continue
		}
		m, err := c.readEntryManifest(e.Dir)
		if err != nil || !m.defines(class) {
			continue
		}
		found = append(found, e)
	}
	if len(found) == 0 {
		if version != "" {
			return Entry{}, fmt.Errorf("class %s version %s: %w", class, version, ErrNotFound)
		}
		return Entry{}, fmt.Errorf("class %s: %w", class, ErrNotFound)
	}
	sort.Slice(found, func(i, j int) bool {
		if c := compareVersions(found[i].Version, found[j].Version); c != 0 {
			return c > 0
		}
		return found[i].FullName < found[j].FullName
	})
	return found[0], nil
}

// ClassRef is one class of a hierarchy and the package defining it.
type ClassRef struct {
	Name    string
	Package *Package // nil when no cached package defines the class
}

// Hierarchy returns class followed by its ancestors, breadth-first over
// Extends, each class once (docs/design.md, "Hooks"), each with the package
// that defines it, whose usage lock the session then holds. from is the
// package that defines class (from FindClass), or nil to look it up. An
// ancestor is looked up first in from and the packages it requires, then
// in the whole cache; a class no cached package defines ends its branch.
// Without any package for class, the hierarchy is class alone.
func (s *Session) Hierarchy(ctx context.Context, class string, from *Package) ([]ClassRef, error) {
	owner := map[string]*Package{}
	lookup := func(name string) (*classDef, error) {
		candidates := []*Package{from}
		if from != nil {
			reqs := make([]string, 0, len(from.manifest.Require))
			for r := range from.manifest.Require {
				reqs = append(reqs, r)
			}
			sort.Strings(reqs)
			for _, r := range reqs {
				if p, err := s.Package(ctx, r, ""); err == nil {
					candidates = append(candidates, p)
				}
			}
		}
		for _, p := range candidates {
			if p == nil {
				continue
			}
			if cl, ok := p.classes[name]; ok {
				owner[name] = p
				return cl, nil
			}
		}
		p, err := s.FindClass(ctx, name, "", "")
		if err != nil {
			return nil, err
		}
		owner[name] = p
		return p.classes[name], nil
	}
	names, err := hierarchy(class, lookup)
	if err != nil {
		return nil, err
	}
	out := make([]ClassRef, len(names))
	for i, n := range names {
		out[i] = ClassRef{Name: n, Package: owner[n]}
	}
	return out, nil
}
