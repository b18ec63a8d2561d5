package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/internal/atomicfile"
)

// namedFile is an input that an output must not overwrite: what it is to
// the user ("the model input", "the --snapshot input", "the saved plan")
// and its path as given ("-": standard input, never a clash).
type namedFile struct{ role, path string }

// checkOutput checks, before anything runs, that writeFileAtomic can
// replace path (given with flag, "--write" or "--out"), and returns the
// file it will replace: path itself, or the file a symbolic link at path
// resolves to (written through: the link stays). It refuses, naming flag
// and path:
//   - a directory, or an existing file that is not a regular one (a
//     device, a named pipe, a socket: renaming over one would replace it,
//     and opening one can block);
//   - a symbolic link to a file that does not exist;
//   - a path that is one of inputs, compared by file identity after
//     resolving links (os.SameFile), so that no spelling of the input gets
//     past; advice ends that message;
//   - a folder that does not exist, is not a directory or in which the
//     user cannot create the temporary file of the atomic write (tried,
//     not guessed from the mode bits: a read-only file system, an
//     immutable folder or an ACL say no too).
func checkOutput(flag, path string, inputs []namedFile, advice string) (string, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s %s: %s", flag, path, fmt.Sprintf(format, a...))
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
		for _, in := range inputs {
			if in.path == "" || in.path == "-" {
				continue
			}
			if ist, err := os.Stat(in.path); err == nil && os.SameFile(st, ist) {
				return "", fail("is %s %s; %s", in.role, in.path, advice)
			}
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

// checkNotSidecar refuses an output path (given with flag) that is the
// lock or journal file apply keeps beside one of files (<file>.lock,
// <file>.journal, beside the file as given or as its links resolve): those
// are objgc's own, and renaming an output over a lock file that another
// apply holds would drop its lock. advice ends the message.
func checkNotSidecar(flag, path string, files []namedFile, advice string) error {
	out := resolvedAbs(path)
	for _, f := range files {
		if f.path == "" || f.path == "-" {
			continue
		}
		for _, base := range []string{absPath(f.path), resolvedAbs(f.path)} {
			for _, side := range []struct{ path, kind string }{{destroy.LockPath(base), "lock"}, {destroy.JournalPath(base), "journal"}} {
				if out == side.path {
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
