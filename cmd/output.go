package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/destroy/journal"
	"github.com/objgc/objgc/internal/atomicfile"
)

// namedFile is a file of the run that an output must not overwrite: what
// it is to the user ("the model input", "the --snapshot input", "the
// saved plan", "the --write output") and its path as given ("-" or "":
// none, never a clash). The lock and journal files apply keeps beside it
// (<file>.lock, <file>.journal) are protected with it. rewritable: the
// output may be the file itself (apply rewrites the model, or the --graph
// input, in place), only not its lock or journal.
type namedFile struct {
	role, path string
	rewritable bool
}

// checkOutput checks, before anything runs, that writeFileAtomic can
// replace path (given with flag, "--write", "--junit" or "--out"), and
// returns the file it will replace: path itself, or the file a symbolic
// link at path resolves to (written through: the link stays). It refuses,
// naming flag and path:
//   - one of files, or the lock or journal file of one of them (checkClash:
//     by name and by file identity); advice ends that message;
//   - a directory, or an existing file that is not a regular one (a
//     device, a named pipe, a socket: renaming over one would replace it,
//     and opening one can block);
//   - a symbolic link to a file that does not exist;
//   - a folder that does not exist, is not a directory or in which the
//     user cannot create the temporary file of the atomic write (tried,
//     not guessed from the mode bits: a read-only file system, an
//     immutable folder or an ACL say no too).
func checkOutput(flag, path string, files []namedFile, advice string) (string, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s %s: %s", flag, path, fmt.Sprintf(format, a...))
	}
	if err := checkClash(flag, path, files, advice); err != nil {
		return "", err
	}
	real := path
	lst, err := os.Lstat(path)
	switch {
	case err == nil:
		st := lst
		if lst.Mode()&fs.ModeSymlink != 0 {
			if st, err = os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				dest, _ := os.Readlink(path)
				return "", fail("is a symbolic link to %s, which does not exist", dest)
			} else if err != nil {
				return "", fail("%v", unwrapPath(err))
			}
		}
		if st.IsDir() {
			return "", fail("is a directory; give the file to write")
		}
		if !st.Mode().IsRegular() {
			hint := map[string]string{"--write": "give --write - for standard output", "--out": "for the JSON plan on standard output use --format json"}[flag]
			return "", fail("is not a regular file (%s); %s", fileKind(st.Mode()), hint)
		}
		if lst.Mode()&fs.ModeSymlink != 0 {
			if real, err = filepath.EvalSymlinks(path); err != nil {
				return "", fail("%v", unwrapPath(err))
			}
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", fail("%v", unwrapPath(err))
	}
	dir := filepath.Dir(real)
	switch st, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return "", fail("folder %s does not exist", dir)
	case err != nil:
		return "", fail("folder %s: %v", dir, unwrapPath(err))
	case !st.IsDir():
		return "", fail("folder %s is not a directory", dir)
	}
	if err := probeFolder(dir, real); err != nil {
		return "", fail("folder %s is not writable: %v", dir, unwrapPath(err))
	}
	return real, nil
}

// probeFolder creates and removes a temporary file named as the atomic
// write of file names its own, which is what the write needs of dir.
func probeFolder(dir, file string) error {
	f, err := os.CreateTemp(dir, "."+filepath.Base(file)+".tmp-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// unwrapPath returns the reason of a *fs.PathError (the caller names the
// path), err itself otherwise.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fileKind names the type of a file that is not a regular one.
func fileKind(m fs.FileMode) string { return atomicfile.Kind(m) }

// sameFile reports whether a and b name the same existing file, links
// resolved.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// checkClash refuses an output path (given with flag) that is one of
// files (unless rewritable), or the lock or journal file apply keeps
// beside one of them (<file>.lock, <file>.journal, beside the file as
// given or as its links resolve): those are objgc's own, and renaming an
// output over a lock file that another apply holds would drop its lock.
// A clash is found by name (absolute, links resolved: the output need not
// exist yet) and by file identity (device and inode, os.SameFile), so that
// a hard link, or a folder reached by two paths, gets past neither.
// advice ends the message.
func checkClash(flag, path string, files []namedFile, advice string) error {
	out := resolvedAbs(path)
	outSt, outErr := os.Stat(path)
	same := func(name string) bool {
		if resolvedAbs(name) == out {
			return true
		}
		if outErr != nil {
			return false
		}
		st, err := os.Stat(name)
		return err == nil && os.SameFile(outSt, st)
	}
	for _, f := range files {
		if f.path == "" || f.path == "-" {
			continue
		}
		if !f.rewritable && same(f.path) {
			return fmt.Errorf("%s %s: is %s %s; %s", flag, path, f.role, f.path, advice)
		}
		for _, base := range []string{absPath(f.path), resolvedAbs(f.path)} {
			for _, side := range []struct{ path, kind string }{{destroy.LockPath(base), "lock"}, {journal.PathFor(base), "journal"}} {
				if same(side.path) {
					return fmt.Errorf("%s %s: is the %s file of %s %s, objgc's own; %s", flag, path, side.kind, f.role, f.path, advice)
				}
			}
		}
	}
	return nil
}

// resolvedAbs is path absolute with its links resolved, as far as they
// exist (a file not yet there resolves through its folder).
func resolvedAbs(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return absPath(r)
	}
	if d, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		return filepath.Join(absPath(d), filepath.Base(path))
	}
	return absPath(path)
}
