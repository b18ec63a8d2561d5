package hook

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// WritersError is what [CheckWriters] returns for a hook that someone
// other than the user running objgc, or root, could change: the hook file
// or a directory on its path is theirs, or their group's or everyone's
// to write.
type WritersError struct {
	Hook string // the hook's path
	// Path is the file or directory at fault: the hook, its hooks dir,
	// a directory between them, or a directory holding the target of a
	// symbolic link on the way.
	Path string
	// UID is Path's owner, Me the effective uid of objgc; Mode its mode.
	UID, Me int
	Mode    fs.FileMode
	// Owner is set when Path belongs to someone other than Me or root;
	// otherwise Path is writable by its group or others.
	Owner bool
}

func (e *WritersError) Error() string {
	what := "hook " + e.Hook
	if e.Path != e.Hook {
		what += ": " + e.Path
	}
	if e.Owner {
		fix := "chown it to yourself or root"
		if e.Me == 0 {
			fix = "run chown 0 " + e.Path
		}
		return fmt.Sprintf("%s is owned by uid %d, not by you (uid %d) or root, who could change what runs; %s", what, e.UID, e.Me, fix)
	}
	who := map[fs.FileMode]string{0o020: "its group", 0o002: "others", 0o022: "its group and others"}[e.Mode.Perm()&0o022]
	return fmt.Sprintf("%s is writable by %s (mode %s), who could change what runs; run chmod go-w %s", what, who, e.Mode, e.Path)
}

// CheckWriters returns nil when only the user running objgc and root can
// change what hook f runs, else a *WritersError naming the first file or
// directory at fault. It checks, following symbolic links, the hooks dir
// f was found in (for a package's hook, the package directory), every
// directory between it and the hook, and the hook file: each must belong
// to the effective user or root and be writable by neither its group nor
// others; a directory with the sticky bit (as /tmp has) may be writable
// by others, since they can then neither remove nor rename what is not
// theirs, and what they could add is checked in turn. When a path on the
// way is a symbolic link, every directory holding its target, up to the
// root, is checked too: the link leads out of the place checked. The
// configuration file is held to the same rule. On systems without Unix
// owners it returns nil.
func CheckWriters(f Found) error {
	if problems := WritersProblems(f); len(problems) > 0 {
		return problems[0]
	}
	return nil
}

// WritersProblems is CheckWriters that goes on past the first file or
// directory at fault: every one on the way to hook f, in the order
// CheckWriters checks them, so that one fix covers them all.
func WritersProblems(f Found) []*WritersError {
	var problems []*WritersError
	add := func(err error) {
		if we, ok := err.(*WritersError); ok {
			problems = append(problems, we)
		}
	}
	top := f.Source.Dir
	if f.Source.PackageDir != "" {
		top = f.Source.PackageDir
	}
	runAs := -1
	if f.Source.User != nil {
		runAs = f.Source.User.UID
	}
	top, hookPath := absPath(top), absPath(f.Path)
	chain := []string{hookPath}
	if rel, err := filepath.Rel(top, hookPath); err == nil && rel != "." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != ".." {
		chain = []string{top}
		p := top
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			p = filepath.Join(p, part)
			chain = append(chain, p)
		}
	}
	for _, p := range chain {
		add(checkWriter(hookPath, p, runAs))
		if isLink(p) {
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				continue // Run reports a hook it cannot reach
			}
			for d := filepath.Dir(real); ; d = filepath.Dir(d) {
				add(checkWriter(hookPath, d, runAs))
				if d == filepath.Dir(d) {
					break
				}
			}
		}
	}
	return problems
}
