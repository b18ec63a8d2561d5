package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// ErrChanged is wrapped by the *HookError of a hook whose content is not
// the one it was planned with (Invocation.SHA256): it was not run.
var ErrChanged = errors.New("hook changed since it was planned")

// Sums remembers the sha256 of the hook files Run has hashed, by file
// identity (device and inode, size, modification and status change
// time), so that a hook run for every object of a class is read once, not
// once a run, while a file replaced or written since is read again. The
// zero value is ready; it is safe for concurrent use.
type Sums struct {
	mu sync.Mutex
	m  map[string]hashed
}

// sumsSettle is how long ago a file's status must have changed for Sums
// to remember its sha256.
var sumsSettle = time.Second

type hashed struct {
	fi    os.FileInfo
	ctime int64
	sum   string
}

// sum returns the sha256 (lower-case hex) of the open hook file f, whose
// status is fi: from s when f is the file hashed before and unchanged
// since, else read from f (from its start, with pread: f's offset, which
// the hook inherits, stays 0). A nil s always reads.
func (s *Sums) sum(path string, f *os.File, fi os.FileInfo) (string, error) {
	ctime := changeTime(fi)
	if s != nil {
		s.mu.Lock()
		h, ok := s.m[path]
		s.mu.Unlock()
		if ok && ctime != 0 && h.ctime == ctime && os.SameFile(h.fi, fi) && h.fi.Size() == fi.Size() && h.fi.ModTime().Equal(fi.ModTime()) {
			return h.sum, nil
		}
	}
	d := sha256.New()
	if _, err := io.Copy(d, io.NewSectionReader(f, 0, fi.Size()+1)); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(d.Sum(nil))
	if s != nil && ctime != 0 && time.Now().UnixNano()-ctime > int64(sumsSettle) {
		// A file written an instant ago could be written again within
		// the same tick of the status change clock (the kernel's coarse
		// clock): it is not remembered.
		s.mu.Lock()
		if s.m == nil {
			s.m = map[string]hashed{}
		}
		s.m[path] = hashed{fi: fi, ctime: ctime, sum: sum}
		s.mu.Unlock()
	}
	return sum, nil
}

// changed is the reason of a hook whose sha256 is not the planned one.
func changed(planned, now string) string {
	return fmt.Sprintf("changed since it was planned (sha256 %s, now %s); not run: plan again", short(planned), short(now))
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}
