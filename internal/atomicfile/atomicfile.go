// Package atomicfile replaces files atomically: readers see the old or the
// new content, never a mix (STYLE.md "Atomic writes": a temporary file in
// the same folder, write, chmod, fsync, close, rename, fsync the folder).
package atomicfile

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes path through a temporary file in its folder so
// that readers see the old or the new content, never a mix. An existing
// file keeps its mode. A symbolic link at path is written through: the
// file it resolves to is replaced, in that file's own folder, and the link
// stays. An existing path that is not a regular file is an error (callers
// check outputs before any work; this is the last guard).
func Write(path string, mode os.FileMode, write func(io.Writer) error) error {
	return WriteCommitted(path, mode, write, nil)
}

// WriteCommitted is Write that calls beforeRename, when not
// nil, with the sha256 (lower-case hex) of the new content once it is
// fsynced and before it is renamed into place; an error from it leaves
// path as it was.
func WriteCommitted(path string, mode os.FileMode, write func(io.Writer) error, beforeRename func(sum string) error) (err error) {
	shown := path
	if lst, err := os.Lstat(path); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		if path, err = filepath.EvalSymlinks(path); err != nil {
			return fmt.Errorf("writing %s: %w", shown, err)
		}
	}
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("writing %s: not a regular file (%s)", shown, Kind(st.Mode()))
		}
		mode = st.Mode().Perm()
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	var out io.Writer = f
	var sum hash.Hash
	if beforeRename != nil {
		sum = sha256.New()
		out = io.MultiWriter(f, sum)
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	if err = write(bw); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if beforeRename != nil {
		if err = beforeRename(hex.EncodeToString(sum.Sum(nil))); err != nil {
			return err
		}
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Kind names the type of a file that is not a regular one.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "irregular file"
}
