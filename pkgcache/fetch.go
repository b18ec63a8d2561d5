package pkgcache

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/objgc/objgc/internal/inputfile"
	"github.com/objgc/objgc/internal/lockfile"
)

// httpDoer sends an HTTP request; *http.Client is one.
type httpDoer interface {
	Do(*http.Request) (*http.Response, error)
}

// archiveFile is a source copied into tmp/ while hashing it.
type archiveFile struct {
	c      *Cache
	f      *os.File // open for reading: the archive is read through it, never by its name again
	size   int64
	path   string
	id     string
	unlock func()
}

func (a *archiveFile) remove() {
	a.f.Close()
	a.c.remove(a.path)
	a.unlock()
}

// newTempFile creates tmp/dl.* and locks it so that a prune does not take
// it for the leftover of a killed process.
func (c *Cache) newTempFile() (*os.File, func(), error) {
	if err := c.mkdirAll(c.tmpDir()); err != nil {
		return nil, nil, err
	}
	f, name, err := c.createTemp(c.tmpDir(), "dl.")
	if err != nil {
		return nil, nil, err
	}
	if err := c.chownFile(f); err != nil {
		f.Close()
		c.remove(name)
		return nil, nil, err
	}
	// On a descriptor of its own, so that the lock outlives f.Close.
	unlock, err := c.tryLockAt(name, lockfile.Exclusive)
	if err == nil && unlock == nil {
		err = fmt.Errorf("locking %s: %w", name, ErrLocked)
	}
	if err != nil {
		f.Close()
		c.remove(name)
		return nil, nil, err
	}
	return f, unlock, nil
}

// fetch copies src (file, directory or URL) into a temp file under tmp/,
// computing its sha256, and never more than MaxUnpackedSize bytes.
func (c *Cache) fetch(ctx context.Context, src string, pre *Source) (_ *archiveFile, err error) {
	if !isURL(src) && pre == nil {
		// A named pipe would be waited on, in open(2), where no
		// signal reaches: refused before tmp/ is touched.
		if _, err := inputfile.Check(src); errors.Is(err, inputfile.ErrNotRegular) {
			return nil, &InvalidPackageError{Source: src, Reason: fmt.Sprintf("%s; give a zip archive, a package directory or a URL", unwrapNotRegular(err))}
		}
	}
	f, unlock, err := c.newTempFile()
	if err != nil {
		return nil, fmt.Errorf("adding %s: %w", src, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			c.remove(f.Name())
			unlock()
		}
	}()
	h := sha256.New()
	w := io.MultiWriter(f, h)
	limit := c.maxUnpacked()
	switch {
	case pre != nil:
		if pre.err != nil {
			return nil, pre.err
		}
		if _, err := pre.f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("adding %s: %w", src, err)
		}
		n, err := io.Copy(w, io.LimitReader(ctxReader{ctx, pre.f}, limit+1))
		if err != nil {
			return nil, fmt.Errorf("adding %s: %w", src, err)
		}
		if n > limit {
			return nil, &InvalidPackageError{Source: src, Reason: fmt.Sprintf("archive is larger than the limit of %d bytes", limit)}
		}
	case isURL(src):
		if err := c.download(ctx, src, w, limit); err != nil {
			return nil, err
		}
	default:
		st, err := os.Stat(src)
		if err != nil {
			return nil, fmt.Errorf("adding %s: %w", src, err)
		}
		if st.IsDir() {
			// A link to a package directory (releases/current) is the
			// directory it names, as with a trailing slash: the
			// operator's path, outside the cache.
			dir, err := filepath.EvalSymlinks(src)
			if err != nil {
				return nil, fmt.Errorf("adding %s: %w", src, err)
			}
			if err := zipDir(ctx, dir, w, limit, c.maxEntries()); err != nil {
				var ip *InvalidPackageError
				if errors.As(err, &ip) {
					return nil, err
				}
				return nil, fmt.Errorf("adding %s: %w", src, err)
			}
		} else {
			in, _, err := inputfile.Open(src)
			if errors.Is(err, inputfile.ErrNotRegular) {
				return nil, &InvalidPackageError{Source: src, Reason: unwrapNotRegular(err)}
			}
			if err != nil {
				return nil, fmt.Errorf("adding %s: %w", src, err)
			}
			n, err := io.Copy(w, io.LimitReader(ctxReader{ctx, in}, limit+1))
			in.Close()
			if err != nil {
				return nil, fmt.Errorf("adding %s: %w", src, err)
			}
			if n > limit {
				return nil, &InvalidPackageError{Source: src, Reason: fmt.Sprintf("archive is larger than the limit of %d bytes", limit)}
			}
		}
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		return nil, fmt.Errorf("adding %s: %w", src, err)
	}
	return &archiveFile{c: c, f: f, size: size, path: f.Name(), id: hex.EncodeToString(h.Sum(nil)), unlock: unlock}, nil
}

func isURL(src string) bool {
	return strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://")
}

// unwrapNotRegular is what an *inputfile.NotRegularError says without the
// path, which an InvalidPackageError names already.
func unwrapNotRegular(err error) string {
	var nr *inputfile.NotRegularError
	if errors.As(err, &nr) {
		return "is a " + nr.Kind + ", not a regular file"
	}
	return err.Error()
}

// ctxReader is r that fails with ctx's error once ctx ends: copying a
// large local archive stops on the first interrupt.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// httpClient is c.client, or a client with c's connect and header
// timeouts.
func (c *Cache) httpClient() httpDoer {
	if c.client != nil {
		return c.client
	}
	connect := orDefault(c.ConnectTimeout, DefaultConnectTimeout)
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = connect
	t.ResponseHeaderTimeout = orDefault(c.HeaderTimeout, DefaultHeaderTimeout)
	return &http.Client{Transport: t}
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// errIdle ends a download whose body stalled for longer than IdleTimeout.
var errIdle = errors.New("no data received")

func (c *Cache) download(ctx context.Context, url string, w io.Writer, limit int64) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("downloading %s: %w", url, err)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return fmt.Errorf("downloading %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("downloading %s: server answered %s", url, resp.Status)
	}
	// The idle timer cancels the request, which ends a Read blocked on a
	// silent server; every byte received winds it up again.
	idle := orDefault(c.IdleTimeout, DefaultIdleTimeout)
	timer := time.AfterFunc(idle, func() { cancel(fmt.Errorf("%w for %v", errIdle, idle)) })
	defer timer.Stop()
	body := readerFunc(func(p []byte) (int, error) {
		n, err := resp.Body.Read(p)
		if n > 0 {
			timer.Reset(idle)
		}
		return n, err
	})
	n, err := io.Copy(w, io.LimitReader(body, limit+1))
	if err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, errIdle) {
			err = cause
		}
		return fmt.Errorf("downloading %s: body ended after %d bytes: %w", url, n, err)
	}
	if n > limit {
		return &InvalidPackageError{Source: url, Reason: fmt.Sprintf("archive is larger than the limit of %d bytes", limit)}
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return fmt.Errorf("downloading %s: body has %d bytes, Content-Length said %d", url, n, resp.ContentLength)
	}
	return nil
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// zipEpoch is the modification time of every entry of a canonical zip.
var zipEpoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// zipDir writes the canonical zip of dir to w (see Add).
func zipDir(ctx context.Context, dir string, w io.Writer, limit int64, maxEntries int) error {
	zw := zip.NewWriter(w)
	var total int64
	entries := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if d.IsDir() {
			return nil
		}
		if entries++; entries > maxEntries {
			return &InvalidPackageError{Source: dir, Reason: fmt.Sprintf("more than the limit of %d entries", maxEntries)}
		}
		hdr := &zip.FileHeader{Name: name, Method: zip.Store, Modified: zipEpoch}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			hdr.SetMode(fs.ModeSymlink | 0o777)
			fw, err := zw.CreateHeader(hdr)
			if err != nil {
				return err
			}
			_, err = io.WriteString(fw, filepath.ToSlash(target))
			return err
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
			if total > limit {
				return &InvalidPackageError{Source: dir, Reason: fmt.Sprintf("files are larger than the limit of %d bytes", limit)}
			}
			hdr.SetMode(canonicalMode(info.Mode()))
			fw, err := zw.CreateHeader(hdr)
			if err != nil {
				return err
			}
			in, _, err := inputfile.Open(p) // swapped for a pipe: refused, not waited on
			if err != nil {
				return err
			}
			defer in.Close()
			_, err = io.Copy(fw, ctxReader{ctx, in})
			return err
		default:
			return &InvalidPackageError{Source: dir, Reason: fmt.Sprintf("%s is not a regular file, directory or link", name)}
		}
	})
	if err != nil {
		return err
	}
	return zw.Close()
}

// canonicalMode keeps only whether a file is executable.
func canonicalMode(m fs.FileMode) fs.FileMode {
	if m.Perm()&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// Source is a local source of Add (an archive or a package directory)
// opened ahead by OpenSource, with the rights of whoever opened it: a
// root process opens the operator's files before it becomes the cache's
// owner (Owner.Become), who may not be able to read them.
type Source struct {
	f   *os.File // the archive, or the canonical zip of the directory in an unlinked temporary file
	err error    // why the source cannot be added; Add returns it
}

// Close closes the source.
func (s *Source) Close() {
	if s.f != nil {
		s.f.Close()
	}
}

// OpenSource opens the local source src as Add would read it: a regular
// file as it is (never waiting on a FIFO), a directory (or a link to one)
// as its canonical zip, at most limit bytes and maxEntries entries (zero:
// the defaults), written to an unlinked file in the system's temporary
// directory. A source that cannot be opened is not an error here: Add of
// it returns the error (*InvalidPackageError when the source is bad).
func OpenSource(ctx context.Context, src string, limit int64, maxEntries int) *Source {
	if limit <= 0 {
		limit = DefaultMaxUnpackedSize
	}
	if maxEntries <= 0 {
		maxEntries = DefaultMaxEntries
	}
	st, err := inputfile.Check(src)
	if errors.Is(err, inputfile.ErrNotRegular) {
		return &Source{err: &InvalidPackageError{Source: src, Reason: fmt.Sprintf("%s; give a zip archive, a package directory or a URL", unwrapNotRegular(err))}}
	}
	if err != nil {
		return &Source{err: fmt.Errorf("adding %s: %w", src, err)}
	}
	if !st.IsDir() {
		f, _, err := inputfile.Open(src)
		if errors.Is(err, inputfile.ErrNotRegular) {
			return &Source{err: &InvalidPackageError{Source: src, Reason: unwrapNotRegular(err)}}
		}
		if err != nil {
			return &Source{err: fmt.Errorf("adding %s: %w", src, err)}
		}
		return &Source{f: f}
	}
	dir, err := filepath.EvalSymlinks(src)
	if err != nil {
		return &Source{err: fmt.Errorf("adding %s: %w", src, err)}
	}
	f, err := os.CreateTemp("", "objgc-source-")
	if err != nil {
		return &Source{err: fmt.Errorf("adding %s: %w", src, err)}
	}
	os.Remove(f.Name())
	if err := zipDir(ctx, dir, f, limit, maxEntries); err != nil {
		f.Close()
		var ip *InvalidPackageError
		if errors.As(err, &ip) {
			return &Source{err: err}
		}
		return &Source{err: fmt.Errorf("adding %s: %w", src, err)}
	}
	return &Source{f: f}
}
