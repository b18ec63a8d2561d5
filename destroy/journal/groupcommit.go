package journal

import (
	"fmt"
	"os"
)

// start makes f the journal's file and starts the flusher.
func (j *Journal) start(f *os.File) {
	j.f = f
	j.kick = make(chan struct{}, 1)
	j.stop = make(chan struct{})
	j.flushed = make(chan struct{})
	go j.flusher()
}

// flusher fsyncs, each time it is kicked, every record written so far:
// hook end records become durable soon after they are written, in one
// fsync for all the hooks that ended meanwhile, without their callers
// waiting for it.
func (j *Journal) flusher() {
	defer close(j.flushed)
	for {
		select {
		case <-j.stop:
			return
		case <-j.kick:
			j.Sync(j.Written()) // a failure is sticky: the next call sees it
		}
	}
}

// writeSync is write, then Sync of the record: it returns once the record
// is durable. Concurrent calls share fsyncs.
func (j *Journal) writeSync(rec record) error {
	seq, err := j.write(rec)
	if err != nil {
		return err
	}
	return j.Sync(seq)
}

// bufferSize is how many bytes of state changes write keeps before it
// writes them to the file.
const bufferSize = 64 << 10

// write validates rec, gives it the next Seq, adds it to the journal as
// one line and returns its Seq. A hook record (and anything that is not a
// state change) is written to the file with one write(2), together with
// the state changes before it, before write returns: it survives the death
// of this process from then on. State changes are kept in memory up to
// 64 KiB, until the next such record, Sync or Close: should the process
// die first, they are lost, which is as if it had died before them (no
// hook started after them). A record is durable once a Sync of its Seq,
// or of a later one, returns; a step that depends on it must not start
// before that.
//
// A stateChange must be legal (transition) from the object's last
// recorded state (alive when none); an empty From is filled in with that
// state. A hookStart is refused for a hook that ended successfully, or
// that this process started and has not ended; a hook that ended in
// failure may start again (a retry). A hookEnd needs a start.
// A refused record is not written, and the error is a *transitionError for
// an illegal transition. After a failed write or fsync the journal
// refuses every record: the file's content is in doubt.
func (j *Journal) write(rec record) (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return 0, j.err
	}
	if j.f == nil {
		return 0, fmt.Errorf("journal %s: closed", j.path)
	}
	sc, isState := rec.(stateChange)
	if isState && sc.From == "" {
		sc.From = j.state(sc.ID)
		rec = sc
	}
	if err := j.check(rec, false); err != nil {
		return 0, fmt.Errorf("journal %s: %w", j.path, err)
	}
	seq := j.seq + 1
	buf, err := appendRecord(j.buf, seq, rec)
	if err != nil {
		return 0, fmt.Errorf("journal %s: %w", j.path, err)
	}
	j.buf = append(buf, '\n')
	j.pending++
	j.apply(seq, rec)
	if r, ok := rec.(hookStart); ok {
		j.here[r.Key] = true
	}
	if !isState || len(j.buf) >= bufferSize {
		if err := j.flushLocked(); err != nil {
			return 0, err
		}
	}
	return seq, nil
}

// flushLocked writes the buffered records to the file with one write(2).
func (j *Journal) flushLocked() error {
	if j.pending == 0 {
		return j.err
	}
	_, err := j.f.Write(j.buf)
	j.buf, j.pending = j.buf[:0], 0
	if err != nil && j.err == nil {
		j.err = fmt.Errorf("writing journal %s: %w", j.path, err)
	}
	return j.err
}

// Written returns the Seq of the last record written (0 when none).
func (j *Journal) Written() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.seq
}

// Sync returns once every record up to seq is durable: at once when an
// earlier fsync covered them, else after an fsync that began after they
// were written. One caller at a time runs fsync, without the journal's
// lock (records are written meanwhile); the others wait for it and, if
// it began before their record, for the next one, which one of them runs
// for all (group commit). An fsync error is sticky (after a failed fsync
// the kernel may have dropped the dirty pages: the file is in doubt).
func (j *Journal) Sync(seq int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for {
		if j.err != nil {
			return j.err
		}
		if j.synced >= seq {
			return nil
		}
		if j.f == nil {
			return fmt.Errorf("journal %s: closed", j.path)
		}
		if !j.syncing {
			break
		}
		j.cond.Wait()
	}
	if err := j.flushLocked(); err != nil {
		return err
	}
	j.syncing = true
	upto, f, fsync := j.seq, j.f, j.fsync
	j.mu.Unlock()
	err := fsync(f)
	j.mu.Lock()
	j.syncing = false
	if err != nil {
		if j.err == nil {
			j.err = fmt.Errorf("journal %s: fsync: %w", j.path, err)
		}
	} else if upto > j.synced {
		j.synced = upto
	}
	j.cond.Broadcast()
	return j.err
}

// flushSoon asks the flusher to fsync what was written, without waiting.
func (j *Journal) flushSoon() {
	select {
	case j.kick <- struct{}{}:
	default: // a kick is pending: its fsync will cover this record too
	}
}

// OnSync makes the journal call fn after each fsync that succeeded, with
// the file's size when the fsync began: every byte up to it is durable.
// It lets a test of the run check that a step started only after what it
// depends on was durable. Call it before the first record is written.
func (j *Journal) OnSync(fn func(size int64)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	fsync := j.fsync
	j.fsync = func(f *os.File) error {
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if err := fsync(f); err != nil {
			return err
		}
		fn(fi.Size())
		return nil
	}
}
