package destroy

import (
	"context"
	"errors"
	"sync"

	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/pkgcache"
	"github.com/objgc/objgc/snapshot"
)

// HookFinder finds the hooks of objects (docs/design.md, "Hooks"): for an
// object of class C, <dir>/<C>/destroy in each hooks dir, then
// <package>/hooks/<C>/destroy in the cached package that defines C, for C
// and then each ancestor breadth-first; for a handler H of a subscriber of
// class C, the first <dir>/<C>/notify/<H> or
// <package>/hooks/<C>/notify/<H> in that same order. It is safe for
// concurrent use and remembers what it found per type.
type HookFinder struct {
	Dirs []string
	// Packages resolves classes to cached packages and holds their usage
	// locks; nil: no package cache, the hierarchy of C is C alone.
	Packages *pkgcache.Session

	userOnce sync.Once
	user     *hook.User // Packages.HookUser, once
	userErr  error

	mu      sync.Mutex
	memo    map[typeKey]*Classes
	destroy map[typeKey][]hook.Found
	handler map[hookKey]handlerHook
}

type typeKey struct{ name, version, pkg string }

// hookKey names the lookup of one handler's hook for a type.
type hookKey struct {
	t       typeKey
	handler string
}

// handlerHook is what HandlerHook found.
type handlerHook struct {
	found hook.Found
	ok    bool
	old   []string // files at the old place, when !ok
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
	// Missing names the package the type names (`@package`, with
	// " version V" when the type gives one) when the cache is in use and
	// does not hold it; "" otherwise (PackageWarnings).
	Missing string
	// Ignored maps a class to the package defining it when that package's
	// hooks do not run (pkgcache.Package.RunsHooks: the engine unpacked
	// it, and engine packages are not trusted); PackageWarnings names the
	// hooks it ships.
	Ignored map[string]*pkgcache.Package
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
				if p.RunsHooks {
					c.PackageDirs[t.Name] = p.Dir
				} else {
					c.Ignored = map[string]*pkgcache.Package{t.Name: p}
				}
				break
			}
			c.Names = c.Names[:0]
			for _, r := range refs {
				c.Names = append(c.Names, r.Name)
				switch {
				case r.Package == nil:
				case r.Package.RunsHooks:
					c.PackageDirs[r.Name] = r.Package.Dir
				default:
					if c.Ignored == nil {
						c.Ignored = map[string]*pkgcache.Package{}
					}
					c.Ignored[r.Name] = r.Package
				}
			}
		case !errors.Is(err, pkgcache.ErrNotFound):
			c.Err = err
		case t.Package != "":
			// The class is not found: is the package itself missing, or
			// does it only not define the class?
			if _, err := f.Packages.Package(ctx, t.Package, t.Version); errors.Is(err, pkgcache.ErrNotFound) {
				c.Missing = t.Package
				if t.Version != "" {
					c.Missing += " version " + t.Version
				}
			}
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

// DestroyHooks returns the destroy hooks of an object of type t, in the
// order they run: every hook found, for its class and then each ancestor.
func (f *HookFinder) DestroyHooks(ctx context.Context, t snapshot.Type) []hook.Found {
	k := typeKey{t.Name, t.Version, t.Package}
	f.mu.Lock()
	if h, ok := f.destroy[k]; ok {
		f.mu.Unlock()
		return h
	}
	f.mu.Unlock()
	c := f.Hierarchy(ctx, t)
	found := hook.FindSources(c.Names, hook.Sources(f.Dirs, c.PackageDirs))
	for i := range found {
		f.setUser(&found[i])
	}
	f.mu.Lock()
	if f.destroy == nil {
		f.destroy = map[typeKey][]hook.Found{}
	}
	f.destroy[k] = found
	f.mu.Unlock()
	return found
}

// HandlerHook returns the hook of handler for a subscriber of type t: the
// first one found, and false when there is none.
func (f *HookFinder) HandlerHook(ctx context.Context, t snapshot.Type, handler string) (hook.Found, bool) {
	h := f.handlerHook(ctx, t, handler)
	return h.found, h.ok
}

// OldHandlerPlaces returns, when handler has no hook for a subscriber of
// type t, the files at <dir>/<C>/<handler> (and the same in packages):
// where handler hooks lived before they moved to <C>/notify/<handler>.
// They do not run; a caller warns about them so that the move is not
// missed. Nil when the handler has a hook or nothing is at the old place.
func (f *HookFinder) OldHandlerPlaces(ctx context.Context, t snapshot.Type, handler string) []string {
	return f.handlerHook(ctx, t, handler).old
}

func (f *HookFinder) handlerHook(ctx context.Context, t snapshot.Type, handler string) handlerHook {
	k := hookKey{typeKey{t.Name, t.Version, t.Package}, handler}
	f.mu.Lock()
	if h, ok := f.handler[k]; ok {
		f.mu.Unlock()
		return h
	}
	f.mu.Unlock()
	c := f.Hierarchy(ctx, t)
	sources := hook.Sources(f.Dirs, c.PackageDirs)
	var h handlerHook
	h.found, h.ok = hook.FindHandlerSources(c.Names, handler, sources)
	if h.ok {
		f.setUser(&h.found)
	}
	if !h.ok {
		h.old = hook.OldHandlerPlaces(c.Names, handler, sources)
	}
	f.mu.Lock()
	if f.handler == nil {
		f.handler = map[hookKey]handlerHook{}
	}
	f.handler[k] = h
	f.mu.Unlock()
	return h
}

// setUser gives a hook found in a package the user it runs as
// (pkgcache.Session.HookUser): the cache's owner when objgc runs as root
// on another user's cache. When that owner cannot be resolved, the hook
// cannot run (Found.Err), so that plan warns and apply refuses before
// anything runs. Hooks dirs' hooks are left as they are.
func (f *HookFinder) setUser(found *hook.Found) {
	if found.Source.PackageDir == "" || f.Packages == nil {
		return
	}
	f.userOnce.Do(func() {
		o, err := f.Packages.HookUser()
		switch {
		case err != nil:
			f.userErr = err
		case o != nil:
			f.user = &hook.User{Name: o.Name, UID: o.UID, GID: o.GID, Groups: o.Groups}
		}
	})
	switch {
	case f.userErr != nil:
		if found.Err == nil {
			found.Err = f.userErr
		}
	case f.user != nil:
		found.Source.User = f.user
	}
}
