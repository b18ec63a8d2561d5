package hook

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrNotExecutable is reported (in [Found.Err], and wrapped by the
// [*HookError] that [Run] returns) for a hook that is a regular file
// without any execute permission bit.
var ErrNotExecutable = errors.New("not executable")

// ErrNoexecMount is wrapped, with ErrNotExecutable, by the [Found.Err] of
// a hook on a file system mounted noexec: execve(2) refuses it whatever
// its mode.
var ErrNoexecMount = errors.New("its file system is mounted noexec")

// A Source is one place to look for hooks: the destroy hook of class C is
// the file <Dir>/<C>/destroy, the hook of its handler H is
// <Dir>/<C>/notify/<H> (docs/hooks.md). Notify hooks have a folder of their
// own so that no handler name can select a destroy hook.
//
// A Source with PackageDir set is a package's hooks folder: Dir is then
// normally <PackageDir>/hooks (see packageSource) and a hook found there
// runs with PackageDir as its working directory and OBJGC_PACKAGE_DIR.
//
// User, when not nil, is the user the source's hooks run as instead of
// the user running objgc (see [User]): the owner of another user's
// package cache, for root.
type Source struct {
	Dir        string
	PackageDir string
	User       *User
}

// packageSource returns the Source for the hooks shipped by the package
// unpacked in dir: <dir>/hooks/<C>/destroy and <dir>/hooks/<C>/notify/<H>
// (docs/hooks.md).
func packageSource(dir string) Source {
	return Source{Dir: filepath.Join(dir, "hooks"), PackageDir: dir}
}

// dirSources returns one Source per hooks dir (--hooks-dir, config
// hooks.dirs, OBJGC_HOOKS_DIR), in the given order. Empty entries, as an
// OBJGC_HOOKS_DIR of "a::b" yields, are skipped: they do not mean the
// current directory.
func dirSources(dirs []string) []Source {
	var s []Source
	for _, d := range dirs {
		if d != "" {
			s = append(s, Source{Dir: d})
		}
	}
	return s
}

// A SourceFunc returns, for one class of the hierarchy, the sources to
// search in order.
type SourceFunc func(class string) []Source

// Sources returns the SourceFunc of docs/hooks.md, "Where objgc looks": for class C, every hooks dir
// in order, then the package that defines C when packageDirs maps C to the
// package's unpacked directory in the package cache. packageDirs may be nil.
func Sources(dirs []string, packageDirs map[string]string) SourceFunc {
	base := dirSources(dirs)
	return func(class string) []Source {
		s := base[:len(base):len(base)]
		if p := packageDirs[class]; p != "" {
			s = append(s, packageSource(p))
		}
		return s
	}
}

// Found is one hook file found by [FindSources] or
// [FindHandlerSources].
type Found struct {
	// Path is the hook's cleaned absolute path.
	Path string
	// Class is the class whose hook this is (OBJGC_CLASS).
	Class string
	// Event is EventDestroy or EventNotify.
	Event string
	// Handler is the handler's name for a notify hook, else "".
	Handler string
	// Source is where the hook was found; Source.PackageDir is non-empty
	// when the hook comes from a package.
	Source Source
	// Err is nil when the hook can run. Otherwise the file exists but
	// cannot run: ErrNotExecutable for a regular file the kernel would
	// not execute for this process (faccessat(2): no execute permission
	// for it, or a file system mounted noexec, ErrNoexecMount), or the
	// error from stat(2) (permission denied on the way, say). Such a
	// hook is still returned, so that apply refuses the plan instead of
	// skipping it silently.
	Err error
}

// WorkDir is the working directory the hook runs in (docs/hooks.md): the package
// directory when the hook comes from a package, else the hook's directory.
func (f Found) WorkDir() string {
	if f.Source.PackageDir != "" {
		return f.Source.PackageDir
	}
	return filepath.Dir(f.Path)
}

// NotifyDir is the folder of a class's folder that holds its handler
// hooks: <dir>/<C>/notify/<H>.
const NotifyDir = "notify"

// FindSources returns every destroy hook, for each class of classes in
// order and, within a class, each source of sources(class) in order:
// <Dir>/<class>/destroy. Destroy hooks run in exactly this order
// (docs/hooks.md).
//
// A hook is a regular file (symbolic links are followed); a directory or
// any other kind of file at the path is not a hook and is skipped. A
// regular file without execute permission is returned with Err set.
// Each hook is returned once, for the first class it is found for: paths
// are compared cleaned and absolute, so a dir given twice, or reached as
// both a hooks dir and a package, yields its hooks once. Hooks reached
// through different paths (a symbolic link to another hook) are different
// hooks.
//
// A class or handler that is not a single path component ("", ".", "..",
// or containing "/" or NUL) has no hook: class and handler names come from
// the object model and must not reach outside the hooks dirs. Nor has one
// too long for the file system (ENAMETOOLONG, more than 255 bytes on most):
// no such file can exist.
func FindSources(classes []string, sources SourceFunc) []Found {
	var found []Found
	seen := make(map[string]bool)
	lookup(classes, "", sources, func(f Found) bool {
		if !seen[f.Path] {
			seen[f.Path] = true
			found = append(found, f)
		}
		return true
	})
	return found
}

// FindHandlerSources returns the hook of handler: the first
// <Dir>/<class>/notify/<handler> for each class of classes in order and,
// within a class, each source of sources(class) in order, under the rules
// of [FindSources]; false when there is none.
func FindHandlerSources(classes []string, handler string, sources SourceFunc) (Found, bool) {
	if handler == "" {
		return Found{}, false
	}
	var first Found
	ok := false
	lookup(classes, handler, sources, func(f Found) bool {
		first, ok = f, true
		return false
	})
	return first, ok
}

// OldHandlerPlaces returns the files at <Dir>/<class>/<handler>, where
// handler hooks lived before they moved to <Dir>/<class>/notify/<handler>,
// for each class and source in the order of [FindHandlerSources]. Such a
// file no longer runs; callers warn about it when the handler has no hook.
// A handler named "destroy" or "notify" has no old place: those paths are
// the destroy hook and the notify folder.
func OldHandlerPlaces(classes []string, handler string, sources SourceFunc) []string {
	if handler == EventDestroy || handler == NotifyDir || !isComponent(handler) || sources == nil {
		return nil
	}
	var paths []string
	for _, class := range classes {
		if !isComponent(class) {
			continue
		}
		for _, src := range sources(class) {
			if src.Dir == "" {
				continue
			}
			path := absPath(filepath.Join(src.Dir, class, handler))
			if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
				paths = append(paths, path)
			}
		}
	}
	return paths
}

// lookup yields the hooks of handler, or the destroy hooks when handler
// is "".
func lookup(classes []string, handler string, sources SourceFunc, yield func(Found) bool) {
	if handler != "" && !isComponent(handler) || sources == nil {
		return
	}
	for _, class := range classes {
		if !isComponent(class) {
			continue
		}
		for _, src := range sources(class) {
			if src.Dir == "" {
				continue
			}
			f, ok := stat(src, class, handler)
			if ok && !yield(f) {
				return
			}
		}
	}
}

func stat(src Source, class, handler string) (Found, bool) {
	f := Found{Class: class, Event: EventDestroy, Source: src}
	path := filepath.Join(src.Dir, class, EventDestroy)
	if handler != "" {
		f.Event, f.Handler = EventNotify, handler
		path = filepath.Join(src.Dir, class, NotifyDir, handler)
	}
	path = absPath(path)
	f.Path = path
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || isNotDir(err) || errors.Is(err, syscall.ENAMETOOLONG):
		return f, false
	case err != nil:
		f.Err = err
	case !fi.Mode().IsRegular():
		return f, false
	default:
		if f.Err = checkExec(path, fi); f.Err == nil {
			f.Err = outsidePackage(src, path)
		}
	}
	return f, true
}

// ErrOutsidePackage is reported (in [Found.Err]) for a package's hook
// whose path, links resolved, leads outside the package directory.
var ErrOutsidePackage = errors.New("leads outside its package")

// outsidePackage checks that a hook found in a package's hooks folder
// (path lies, by name, inside src.PackageDir) resolves, every link
// followed, to a file inside src.PackageDir too: a link must not make a
// hook that looks local run a file elsewhere. The package cache rejects
// such links when a package is added; this second check holds even for a
// package directory changed behind the cache's back. It returns nil for a
// Source without PackageDir or a path outside it by name, and an error
// wrapping ErrOutsidePackage, or the error of resolving the links.
func outsidePackage(src Source, path string) error {
	return outsidePackageFile(src, path, func() (string, error) { return filepath.EvalSymlinks(path) })
}

// outsidePackageFile is outsidePackage with the file path leads to given
// by real (for Run: the file it opened, as the kernel names it).
func outsidePackageFile(src Source, path string, real func() (string, error)) error {
	if src.PackageDir == "" {
		return nil
	}
	pkg, err := filepath.Abs(src.PackageDir)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(pkg, path); err != nil || !filepath.IsLocal(rel) {
		return nil
	}
	file, err := real()
	if err != nil {
		return err
	}
	root, err := filepath.EvalSymlinks(pkg)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(root, file); err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("%s: %w %s (it is %s)", path, ErrOutsidePackage, src.PackageDir, file)
	}
	return nil
}

// isComponent reports whether s is usable as one path component.
func isComponent(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\x00")
}

// isNotDir reports ENOTDIR: <dir>/<class> exists but is a file.
func isNotDir(err error) bool {
	return errors.Is(err, syscall.ENOTDIR)
}
