// Package atomicfile replaces files atomically: readers see the old or the
// new content, never a mix, and a crash leaves one of the two: a temporary
// file in the same folder, write, chmod, fsync, close, rename, fsync the
// folder.
//
// Every atomic write of objgc goes through writeFile, and every fsync of
// a folder through SyncDir, so there is one policy for both: the
// temporary file is named .<name>.tmp-* next to the target and removed on
// any failure; the new content is fsynced before the rename; after the
// rename the folder is fsynced and an error doing so is returned (the
// rename may not survive a crash of the machine), except EINVAL, which
// file systems that cannot fsync a folder return (the rename is then as
// durable as they make it), and except on Windows, where a folder is not
// fsynced (FlushFileBuffers refuses a folder opened for reading; NTFS
// journals the rename itself).
package atomicfile

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/objgc/objgc/internal/beside"
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
func WriteCommitted(path string, mode os.FileMode, write func(io.Writer) error, beforeRename func(sum string) error) error {
	_, err := writeFile(path, mode, write, beforeRename, false)
	return err
}

// WriteOpen is Write that returns the new file, open for reading and
// writing with its offset at the end of the content, once it is in place
// and its folder fsynced: the caller appends to the file it wrote, not to
// whatever may be at path by the time it opens it again.
func WriteOpen(path string, mode os.FileMode, write func(io.Writer) error) (*os.File, error) {
	return writeFile(path, mode, write, nil, true)
}

// writeFile is the one atomic write: WriteCommitted, returning the file
// open when keep is set.
func writeFile(path string, mode os.FileMode, write func(io.Writer) error, beforeRename func(sum string) error, keep bool) (kept *os.File, err error) {
	shown := path
	if lst, err := os.Lstat(path); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		if path, err = filepath.EvalSymlinks(path); err != nil {
			return nil, fmt.Errorf("writing %s: %w", shown, err)
		}
	}
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("writing %s: not a regular file (%s)", shown, Kind(st.Mode()))
		}
		mode = st.Mode().Perm()
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	var out io.Writer = f
	var sum *asyncHash
	if beforeRename != nil {
		sum = newAsyncHash()
		defer sum.Sum()
		out = io.MultiWriter(f, sum)
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	if err = write(bw); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Chmod(mode); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if !keep {
		if err = f.Close(); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if beforeRename != nil {
		if err = beforeRename(hex.EncodeToString(sum.Sum())); err != nil {
			return nil, err
		}
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err = SyncDir(dir); err != nil {
		return nil, fmt.Errorf("writing %s: fsync of its folder: %w", path, err)
	}
	if keep {
		return f, nil
	}
	return nil, nil
}

// SyncDir fsyncs the folder dir, so that the renames and removals done in
// it survive a crash of the machine; see the package doc for the errors it
// ignores.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) {
		return nil
	}
	return err
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

// asyncHash is a sha256 of what is written to it, computed beside the
// writing (beside.Writer): hashing a large write-back on the writing
// goroutine would add its time to the writing's. Sum waits for what was written and
// may be called more than once.
type asyncHash struct {
	h   hash.Hash
	w   *beside.Writer
	sum []byte
}

// hashPiece is the size of the pieces handed to the hashing goroutine.
const hashPiece = 1 << 20

func newAsyncHash() *asyncHash {
	a := &asyncHash{h: sha256.New()}
	a.w = beside.New(hashPiece, func(p []byte) { a.h.Write(p) })
	return a
}

func (a *asyncHash) Write(p []byte) (int, error) { return a.w.Write(p) }

// Sum returns the sha256 of all that was written.
func (a *asyncHash) Sum() []byte {
	if a.sum == nil {
		a.w.Close()
		a.sum = a.h.Sum(nil)
	}
	return a.sum
}
