package destroy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/objgc/objgc/internal/lockfile"
)

// ErrLocked is wrapped by the *LockedError of lockTarget: another process
// holds the target's lock. The CLI maps it to exit status 4. It is
// lockfile.ErrLocked, the one "lock is held" error of objgc.
var ErrLocked = lockfile.ErrLocked

// LockedError says which lock could not be taken and who holds it.
type LockedError struct {
	Path   string // the lock file, <target>.lock
	Holder string // e.g. "pid 123 on host h since 2026-01-02T03:04:05Z (objgc apply m.json)"
	// Waited is how long lockTarget waited; 0 when it failed at once.
	Waited time.Duration
}

func (e *LockedError) Error() string {
	s := e.Path + " is held by " + e.Holder
	if e.Waited > 0 {
		s += fmt.Sprintf(" (waited %s)", e.Waited.Round(time.Millisecond))
	}
	return s
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// lockHolder is the content of a lock file: one JSON line.
type lockHolder struct {
	PID     int      `json:"pid"`
	Host    string   `json:"host"`
	Started string   `json:"started"` // RFC 3339
	Command []string `json:"command"`
}

// LockPath is the lock file apply keeps beside target: <target>.lock.
func LockPath(target string) string { return target + ".lock" }

// lockTarget takes the exclusive flock(2) on LockPath(target) that apply
// holds for its whole run (docs/design.md, "Lock, journal and resume"),
// through github.com/gofrs/flock. The lock is on that sidecar file, never on
// target, because the write-back renames over target, which would drop a
// lock held on it. The lock is objgc's alone (no other program takes it), so
// it is flock(2), not the POSIX record locks of the package cache (package
// internal/lockfile): a record lock would be dropped by any close of another
// descriptor of the file in the process (outside Linux), and flock is what
// earlier objgc releases took, so that an older apply and a newer one still
// exclude each other. On Windows the lock is internal/lockfile's LockFileEx
// far past the start of the file, because gofrs/flock locks the first byte
// there, where the holder record is.
//
// The lock file is opened once, created when missing (mode 0644), without
// following a symbolic link and without waiting on a FIFO
// (O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC), and must be a regular file: a link, a
// FIFO, a directory or a device there is an error wrapping
// lockfile.ErrNotRegular that names the path, and nothing is written
// anywhere. gofrs/flock opens
// the path again with the same flags to lock it (SetFlag); once the lock
// is taken, its descriptor must name the file objgc opened (fstat through
// Flock.Stat against the first open's), else the path was replaced in
// between, which is an error.
//
// timeout 0 fails at once when the lock is held; a positive timeout tries
// again every lockfile.PollInterval until it ends; a negative one waits until ctx ends.
// Before it waits, waiting (when not nil) is called with the holder, as
// LockedError names it: a wait says whose lock it waits for.
// Every wait (for the lock, and for a new holder to record itself) ends
// with ctx. When the lock is not taken the error is a *LockedError
// (errors.Is ErrLocked) naming the holder, or wraps ctx's error when ctx
// ended first.
//
// Once the lock is taken, lockTarget writes the holder (pid, host, start
// time, command line) into the lock file, in place. The lock file is never
// deleted or renamed: another process may be waiting on it, and a new
// file at the same path would be a second, independent lock. unlock
// empties the file and releases the lock; it may be called more than once.
// A process that dies releases its lock (flock semantics).
func lockTarget(ctx context.Context, target string, timeout time.Duration, waiting func(holder string)) (unlock func(), err error) {
	path := LockPath(target)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	f, err := openRegular("lock file", path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	start := time.Now()
	wctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	release, lerr := lockTargetFile(wctx, f, path, false)
	if errors.Is(lerr, lockfile.ErrLocked) && timeout != 0 {
		if waiting != nil {
			waiting(readHolder(ctx, f, path))
		}
		release, lerr = lockTargetFile(wctx, f, path, true)
	}
	if lerr != nil {
		if !errors.Is(lerr, lockfile.ErrLocked) {
			return nil, fmt.Errorf("locking %s: %w", path, lerr)
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("waiting for the lock %s: %w", path, err)
		}
		var waited time.Duration
		if timeout != 0 {
			waited = time.Since(start)
		}
		return nil, &LockedError{Path: path, Holder: readHolder(ctx, f, path), Waited: waited}
	}
	if err := writeHolder(f, start); err != nil {
		release()
		return nil, fmt.Errorf("writing holder into lock file %s: %w", path, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			// Emptied while still held, so that nobody reads our details
			// after we are gone.
			f.Truncate(0)
			release()
			f.Close()
		})
	}, nil
}

// writeHolder writes one JSON line at offset 0, then cuts the file there.
// Writing before truncating means a reader never sees an empty file
// because of us, only the previous holder's line or ours (first line).
func writeHolder(w *os.File, start time.Time) error {
	host, _ := os.Hostname()
	b, err := json.Marshal(lockHolder{
		PID:     os.Getpid(),
		Host:    host,
		Started: start.UTC().Format(time.RFC3339),
		Command: os.Args,
	})
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := w.WriteAt(b, 0); err != nil {
		return err
	}
	if err := w.Truncate(int64(len(b))); err != nil {
		return err
	}
	return w.Sync()
}

// readHolder describes the holder recorded in the lock file f (at path).
// The holder may have just taken the lock and not written yet, so an
// empty file is read again a few times, 20 ms apart, unless ctx ends.
func readHolder(ctx context.Context, f *os.File, path string) string {
	buf := make([]byte, 4096)
	for i := 0; ; i++ {
		n, err := f.ReadAt(buf, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Sprintf("another process (reading %s: %v)", path, err)
		}
		if n > 0 || i == 5 || lockfile.Sleep(ctx, 20*time.Millisecond) != nil {
			return describeHolder(buf[:n])
		}
	}
}

func describeHolder(b []byte) string {
	if len(bytes.TrimSpace(b)) == 0 {
		return "another process (it has not recorded itself yet)"
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	var h lockHolder
	if err := json.Unmarshal(line, &h); err != nil || h.PID == 0 {
		if len(line) > 200 {
			line = line[:200]
		}
		return fmt.Sprintf("another process (unreadable holder record %q)", line)
	}
	s := fmt.Sprintf("pid %d", h.PID)
	if h.Host != "" {
		s += " on host " + h.Host
	}
	if h.Started != "" {
		s += " since " + h.Started
	}
	if len(h.Command) > 0 {
		s += " (" + strings.Join(h.Command, " ") + ")"
	}
	return s
}
