package destroy

import (
	"context"
	"errors"
	"sync"

	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/pkgcache"
	"github.com/objgc/objgc/snapshot"
)

// HookFinder finds the hooks of objects (DESIGN.md section 4): for an
// object of class C, <dir>/<C>/<event> in each hooks dir, then
// <package>/hooks/<C>/<event> in the cached package that defines C; for
// destroy, C and then each ancestor breadth-first. It is safe for
// concurrent use and remembers what it found per type.
type HookFinder struct {
	Dirs []string
	// Packages resolves classes to cached packages and holds their usage
	// locks; nil: no package cache, the hierarchy of C is C alone.
	Packages *pkgcache.Session

	mu   sync.Mutex
	memo map[typeKey]*Classes
	hook map[hookKey][]hook.Found
}

type typeKey struct{ name, version, pkg string }

type hookKey struct {
	t     typeKey
	event string
}

// Classes is the class hierarchy of a type: the class and its ancestors,
// breadth-first, with the directory of the package defining each ("" when
// no cached package defines it).
type Classes struct {
	Names       []string
	PackageDirs map[string]string // class -> unpacked package dir
	// Package is the package defining the class itself, "" when none is
	// cached; Err says why, when the cache could not be read.
	Package string
	Err     error
}

// Hierarchy returns the class hierarchy of t. A type without a name has
// none.
func (f *HookFinder) Hierarchy(ctx context.Context, t snapshot.Type) *Classes {
	k := typeKey{t.Name, t.Version, t.Package}
	f.mu.Lock()
	if c, ok := f.memo[k]; ok {
		f.mu.Unlock()
		return c
	}
	f.mu.Unlock()
	c := &Classes{PackageDirs: map[string]string{}}
	if t.Name != "" {
		c.Names = []string{t.Name}
	}
	if f.Packages != nil && t.Name != "" {
		p, err := f.Packages.FindClass(ctx, t.Name, t.Version, t.Package)
		switch {
		case err == nil:
			c.Package = p.FullName + "/" + p.Version
			refs, err := f.Packages.Hierarchy(ctx, t.Name, p)
			if err != nil {
				c.Err = err
				c.PackageDirs[t.Name] = p.Dir
				break
			}
			c.Names = c.Names[:0]
			for _, r := range refs {
				c.Names = append(c.Names, r.Name)
				if r.Package != nil {
					c.PackageDirs[r.Name] = r.Package.Dir
				}
			}
		case !errors.Is(err, pkgcache.ErrNotFound):
			c.Err = err
		}
	}
	f.mu.Lock()
	if f.memo == nil {
		f.memo = map[typeKey]*Classes{}
	}
	f.memo[k] = c
	f.mu.Unlock()
	return c
}

// Find returns the hooks of event for an object of type t, in the order
// they run: for "destroy" every hook found, for a handler the first one
// found.
func (f *HookFinder) Find(ctx context.Context, t snapshot.Type, event string) []hook.Found {
	k := hookKey{typeKey{t.Name, t.Version, t.Package}, event}
	f.mu.Lock()
	if h, ok := f.hook[k]; ok {
		f.mu.Unlock()
		return h
	}
	f.mu.Unlock()
	c := f.Hierarchy(ctx, t)
	sources := hook.Sources(f.Dirs, c.PackageDirs)
	var found []hook.Found
	if event == hook.EventDestroy {
		found = hook.FindSources(c.Names, event, sources)
	} else if h, ok := hook.FindFirstSource(c.Names, event, sources); ok {
		found = []hook.Found{h}
	}
	f.mu.Lock()
	if f.hook == nil {
		f.hook = map[hookKey][]hook.Found{}
	}
	f.hook[k] = found
	f.mu.Unlock()
	return found
}
