package destroy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// ErrLocked is wrapped by the *LockedError of LockTarget: another process
// holds the target's lock. The CLI maps it to exit status 4.
var ErrLocked = errors.New("target is locked by another process")

// LockedError says which lock could not be taken and who holds it.
type LockedError struct {
	Path   string // the lock file, <target>.lock
	Holder string // e.g. "pid 123 on host h since 2026-01-02T03:04:05Z (objgc apply m.json)"
	// Waited is how long LockTarget waited; 0 when it failed at once.
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

// lockRetryDelay is how often LockTarget tries again while it waits.
const lockRetryDelay = 50 * time.Millisecond

// LockTarget takes the exclusive flock(2) on target+".lock" that apply
// holds for its whole run (DESIGN.md section 5). The lock is on that
// sidecar file, never on target, because the write-back renames over
// target, which would drop a lock held on it.
//
// timeout 0 fails at once when the lock is held; a positive timeout polls
// until it ends; a negative one waits until ctx ends. When the lock is not
// taken the error is a *LockedError (errors.Is ErrLocked) naming the
// holder, or ctx's error when ctx ended first.
//
// Once the lock is taken, LockTarget writes the holder (pid, host, start
// time, command line) into the lock file, in place. The lock file is never
// deleted or renamed: another process may be waiting on it, and a new
// file at the same path would be a second, independent lock. unlock
// empties the file and releases the lock; it may be called more than once.
// A process that dies releases its lock (flock semantics).
func LockTarget(ctx context.Context, target string, timeout time.Duration) (unlock func(), err error) {
	path := target + ".lock"
	fl := flock.New(path, flock.SetPermissions(0o644))
	start := time.Now()
	var ok bool
	switch {
	case timeout == 0:
		ok, err = fl.TryLock()
	default:
		wctx := ctx
		if timeout > 0 {
			var cancel context.CancelFunc
			wctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		ok, err = fl.TryLockContext(wctx, lockRetryDelay)
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			ok, err = false, nil // our own timeout: the lock is held
		}
	}
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if !ok {
		var waited time.Duration
		if timeout != 0 {
			waited = time.Since(start)
		}
		return nil, &LockedError{Path: path, Holder: readHolder(path), Waited: waited}
	}

	// A second descriptor for writing: fl's own is read-only. Closing it
	// does not release the lock (flock locks belong to fl's open file
	// description), but it is kept open until unlock anyway, so that the
	// lock would survive an fcntl-emulated flock too.
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err == nil {
		err = writeHolder(w, start)
		if err != nil {
			w.Close()
		}
	}
	if err != nil {
		fl.Unlock()
		return nil, fmt.Errorf("writing holder into lock file %s: %w", path, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			// Emptied while still held, so that nobody reads our details
			// after we are gone.
			w.Truncate(0)
			w.Close()
			fl.Unlock()
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

// readHolder describes the holder recorded in the lock file at path. The
// holder may have just taken the lock and not written yet, so an empty
// file is read again a few times.
func readHolder(path string) string {
	var b []byte
	for i := 0; ; i++ {
		var err error
		b, err = os.ReadFile(path)
		if err != nil {
			return fmt.Sprintf("another process (reading %s: %v)", path, err)
		}
		if len(b) > 0 || i == 5 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return describeHolder(b)
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
