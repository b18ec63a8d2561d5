package pkgcache

import (
	"archive/zip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/objgc/objgc/internal/atomicfile"
	"github.com/objgc/objgc/internal/inputfile"
	"github.com/objgc/objgc/internal/lockfile"
)

// HTTPDoer sends an HTTP request; *http.Client is one.
type HTTPDoer interface {
	Do(*http.Request) (*http.Response, error)
}

// AddResult is what Add or Reinstall did.
type AddResult struct {
	Source     string   `json:"source"`      // the source as given
	Entry      Entry    `json:"package"`     // the package as it is now in the cache
	Installed  bool     `json:"unpacked"`    // false: the id was already cached, nothing was unpacked
	Replaced   bool     `json:"replaced"`    // Reinstall replaced a cached copy of the same id
	RemovedIDs []string `json:"removed_ids"` // outdated ids of the same FullName and version removed afterwards
	KeptIDs    []string `json:"kept_ids"`    // outdated ids left in place because they are in use
}

// Add puts one package into the cache. src is a zip archive (manifest.yaml
// at the archive root, as Murano ships packages), a package directory, or
// an http:// or https:// URL of an archive.
//
// The id is the hex sha256 of the archive bytes. A directory has no
// archive: its id is the sha256 of a canonical zip built from it
// (entries in lexical order, stored uncompressed, fixed times, modes 0644
// or 0755), so the same directory always gets the same id; the zip of the
// same files made by another tool gets another id.
//
// Install protocol (docs/design.md, "The package cache"; cmd/go's modfetch):
// take the usage lock of the id (shared), check, take the download lock
// (exclusive, after the usage lock, never before), check again, unpack into
// tmp/, validate, record the digests, rename into
// packages/<FullName>/<version>@<id>/. Then the other ids of the same
// FullName and version are removed, each only if its usage lock can be taken
// exclusively without waiting. The usage lock is released when Add returns;
// callers that read the package take it again with AcquireUsage or a
// Session.
//
// Files are not fsynced one by one: the staged package is made durable by
// one syncfs(2) before the rename (see syncStage), so a package is on disk
// whole or not visible at all.
//
// A rejected source leaves nothing in packages/ or tmp/. Rejections are
// *InvalidPackageError (errors.Is ErrInvalidPackage): not a zip archive or
// a truncated one, entries with absolute names or "..", links that
// resolve outside the package or cannot be resolved (see tree.checkLinks),
// entries under a link, special files, more than MaxEntries entries, more
// than MaxUnpackedSize bytes unpacked, manifest.yaml missing or invalid or
// without FullName, FullName or Version not a safe path component, class
// files missing or unreadable. A URL that does not answer 200, times out
// (ConnectTimeout, HeaderTimeout, IdleTimeout) or whose body stops early
// is a plain error. Waiting for a lock ends with ctx (errors.Is
// ErrLocked); when ctx ends, Add stops between entries and the error
// wraps ctx's error.
func (c *Cache) Add(ctx context.Context, src string) (AddResult, error) {
	return c.add(ctx, src, false)
}

// Reinstall is Add, except that a package whose id is already cached is
// unpacked again and replaces the cached copy: the way to repair a
// package that Verify reports as damaged. The replacement follows the
// removal protocol: the usage lock of the id is taken exclusively without
// waiting (the error wraps ErrInUse when a plan or apply uses the
// package; nothing is changed then), then the download lock; the new copy
// is staged and validated, the damaged one renamed aside (.trash.* in its
// FullName directory), the new one renamed into place, and the damaged
// one deleted. A reader never sees a
// mix of the two: it waits for the usage lock, then finds the new copy
// (a crash between the two renames leaves the package absent, never
// half-replaced).
func (c *Cache) Reinstall(ctx context.Context, src string) (AddResult, error) {
	return c.add(ctx, src, true)
}

func (c *Cache) add(ctx context.Context, src string, force bool) (AddResult, error) {
	if c.ownerErr != nil {
		return AddResult{}, c.ownerErr
	}
	arc, err := c.fetch(ctx, src)
	if err != nil {
		return AddResult{}, err
	}
	defer arc.remove()
	zr, err := zip.OpenReader(arc.path)
	if err != nil {
		return AddResult{}, &InvalidPackageError{Source: src, Reason: fmt.Sprintf("not a zip archive, or a truncated one: %v", err)}
	}
	defer zr.Close()
	m, err := c.preflight(&zr.Reader)
	if err != nil {
		return AddResult{}, &InvalidPackageError{Source: src, Reason: err.Error()}
	}
	res, err := c.install(ctx, src, &zr.Reader, m, arc.id, force)
	res.Source = src
	return res, err
}

// archiveFile is a source copied into tmp/ while hashing it.
type archiveFile struct {
	path   string
	id     string
	unlock func()
}

func (a *archiveFile) remove() {
	os.Remove(a.path)
	a.unlock()
}

// newTempFile creates tmp/dl.* and locks it so that a prune does not take
// it for the leftover of a killed process.
func (c *Cache) newTempFile() (*os.File, func(), error) {
	if err := c.mkdirAll(c.tmpDir()); err != nil {
		return nil, nil, err
	}
	f, err := os.CreateTemp(c.tmpDir(), "dl.")
	if err != nil {
		return nil, nil, err
	}
	if err := c.chownFile(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, nil, err
	}
	// On a descriptor of its own, so that the lock outlives f.Close.
	unlock, err := lockfile.TryLockPath(f.Name(), lockfile.Exclusive)
	if err == nil && unlock == nil {
		err = fmt.Errorf("locking %s: %w", f.Name(), ErrLocked)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, nil, err
	}
	return f, unlock, nil
}

// fetch copies src (file, directory or URL) into a temp file under tmp/,
// computing its sha256, and never more than MaxUnpackedSize bytes.
func (c *Cache) fetch(ctx context.Context, src string) (_ *archiveFile, err error) {
	if !isURL(src) {
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
			os.Remove(f.Name())
			unlock()
		}
	}()
	h := sha256.New()
	w := io.MultiWriter(f, h)
	limit := c.maxUnpacked()
	switch {
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
			if err := zipDir(ctx, src, w, limit, c.maxEntries()); err != nil {
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
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("adding %s: %w", src, err)
	}
	return &archiveFile{path: f.Name(), id: hex.EncodeToString(h.Sum(nil)), unlock: unlock}, nil
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

// httpClient is c.Client, or a client with c's connect and header
// timeouts.
func (c *Cache) httpClient() HTTPDoer {
	if c.Client != nil {
		return c.Client
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

// preflight checks entry names and declared sizes and reads the manifest,
// before any lock is taken or anything is written.
func (c *Cache) preflight(zr *zip.Reader) (*Manifest, error) {
	if n := len(zr.File); n > c.maxEntries() {
		return nil, fmt.Errorf("archive has %d entries, more than the limit of %d", n, c.maxEntries())
	}
	var total uint64
	var manifest *zip.File
	nested := "" // the shallowest <folder>/manifest.yaml, for the hint
	seen := map[string]bool{}
	for _, f := range zr.File {
		name, err := cleanZipName(f.Name)
		if err != nil {
			return nil, err
		}
		if seen[name] && !f.FileInfo().IsDir() {
			return nil, fmt.Errorf("entry %q appears twice", f.Name)
		}
		seen[name] = true
		total += f.UncompressedSize64
		if total > uint64(c.maxUnpacked()) {
			return nil, fmt.Errorf("archive expands past the limit of %d bytes", c.maxUnpacked())
		}
		switch {
		case name == "manifest.yaml":
			manifest = f
		case path.Base(name) == "manifest.yaml" && (nested == "" || strings.Count(name, "/") < strings.Count(nested, "/")):
			nested = name
		}
	}
	if manifest == nil && nested != "" {
		// The common mistake: a zip of the package's folder rather than
		// of its contents.
		dir := path.Dir(nested)
		return nil, fmt.Errorf("no manifest.yaml at the archive root; it is at %s: zip the package folder's contents (cd %s && zip -r ../%s.zip .), not the folder",
			nested, dir, path.Base(dir))
	}
	if manifest == nil {
		return nil, errors.New("no manifest.yaml at the archive root")
	}
	rc, err := manifest.Open()
	if err != nil {
		return nil, fmt.Errorf("reading manifest.yaml: %w", err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("reading manifest.yaml: %w", err)
	}
	return ParseManifest(data)
}

// digestRecord is .objgc/records/<id>.json: what was unpacked, recorded
// at unpack time; Verify checks the package against it and List reads
// Size and Installed from it. It lives outside the package directory:
// nothing but the package's own files is in the directory the engine and
// Murano's loader read. Its existence is what makes a package one objgc
// installed (Entry.InstalledBy).
type digestRecord struct {
	FullName  string            `json:"full_name"`
	Version   string            `json:"version"`
	ID        string            `json:"id"`
	Installed time.Time         `json:"installed"`
	Size      int64             `json:"size"`            // bytes of regular files
	Files     map[string]string `json:"files"`           // '/'-separated name -> hex sha256
	Links     map[string]string `json:"links,omitempty"` // name -> link target
}

func (c *Cache) install(ctx context.Context, src string, zr *zip.Reader, m *Manifest, id string, force bool) (AddResult, error) {
	dest := c.entryDir(m.FullName, m.Version, id)
	res := AddResult{}
	var unlockUsage func()
	var err error
	if force {
		// Readers of the copy being replaced must be gone, and no new one
		// may start until the new copy is in place: the removal protocol.
		unlockUsage, err = c.tryLockAt(c.usageLockPath(id), lockfile.Exclusive)
		if err == nil && unlockUsage == nil {
			err = fmt.Errorf("package %s %s (%s) is in use by a plan or apply; try again when it is not: %w", m.FullName, m.Version, id, ErrInUse)
		}
		if err == nil {
			c.touchLastUse(id)
		}
	} else {
		unlockUsage, err = c.AcquireUsage(ctx, id)
	}
	if err != nil {
		return AddResult{}, fmt.Errorf("adding %s: %w", src, err)
	}
	defer unlockUsage()
	if force || !isDir(dest) {
		unlockDL, err := c.lockAt(ctx, c.downloadLockPath(id), lockfile.Exclusive)
		if err != nil {
			return AddResult{}, fmt.Errorf("adding %s: %w", src, err)
		}
		defer unlockDL()
		if force || !isDir(dest) {
			res.Replaced = isDir(dest)
			if err := c.unpackAndRename(ctx, src, zr, m, id, dest); err != nil {
				return AddResult{}, err
			}
			res.Installed = true
		}
	}
	res.RemovedIDs, res.KeptIDs = c.removeOutdatedIDs(m.FullName, m.Version, id)
	e, err := c.entry(m.FullName, m.Version, id)
	if err != nil {
		return AddResult{}, fmt.Errorf("adding %s: %w", src, err)
	}
	e.InUse = true // by us, until we return
	res.Entry = e
	return res, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// unpackAndRename runs with the download lock held.
func (c *Cache) unpackAndRename(ctx context.Context, src string, zr *zip.Reader, m *Manifest, id, dest string) (err error) {
	if err := c.mkdirAll(c.tmpDir()); err != nil {
		return fmt.Errorf("adding %s: %w", src, err)
	}
	stage, err := os.MkdirTemp(c.tmpDir(), id+".stage.")
	if err != nil {
		return fmt.Errorf("adding %s: %w", src, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(stage)
		}
	}()
	rec, err := c.unpack(ctx, zr, stage)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("adding %s: %w", src, ctx.Err())
		}
		var ip *InvalidPackageError
		if errors.As(err, &ip) {
			return err
		}
		return &InvalidPackageError{Source: src, Reason: err.Error()}
	}
	p, err := LoadPackage(stage)
	if err != nil {
		return &InvalidPackageError{Source: src, Reason: strings.ReplaceAll(err.Error(), stage, "archive")}
	}
	if p.FullName != m.FullName || p.Version != m.Version {
		return &InvalidPackageError{Source: src, Reason: "manifest.yaml changed while unpacking"}
	}
	if err := c.chownTree(stage); err != nil {
		return fmt.Errorf("adding %s: %w", src, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("adding %s: %w", src, err)
	}
	// The record goes first: a crash before the package's rename leaves a
	// record without a package, which nothing reads (and prune removes);
	// the other order could leave an objgc package that looks like one
	// the engine unpacked.
	rec.FullName, rec.Version, rec.ID, rec.Installed = m.FullName, m.Version, id, c.now().UTC()
	if err := c.writeRecord(rec); err != nil {
		return fmt.Errorf("adding %s: %w", src, err)
	}
	// Crash safety: everything staged is durable before the rename that
	// makes the package visible (docs/cache.md).
	files := make([]string, 0, len(rec.Files))
	for name := range rec.Files {
		files = append(files, name)
	}
	if err := syncStage(stage, files); err != nil {
		return fmt.Errorf("adding %s: %w", src, err)
	}
	// Reinstall: the damaged copy is moved aside first (the caller holds
	// the usage lock exclusively), and comes back if the new one cannot
	// take its place.
	var old string
	if isDir(dest) {
		if old, err = c.trashName(); err != nil {
			return fmt.Errorf("adding %s: %w", src, err)
		}
		if err := os.Rename(dest, old); err != nil {
			return fmt.Errorf("adding %s: %w", src, err)
		}
		defer func() {
			if err != nil {
				os.Rename(old, dest)
			} else {
				os.RemoveAll(old)
			}
		}()
	}
	// Someone may remove an empty <FullName>/<version>/ parent between
	// MkdirAll and Rename (objgc never does, a person might); try again
	// then.
	for attempt := 0; ; attempt++ {
		if err = c.mkdirAll(filepath.Dir(dest)); err == nil {
			err = os.Rename(stage, dest)
		}
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == 10 {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("adding %s: %w", src, err)
	}
	// The rename made a complete, durable package visible; an error
	// making the rename itself durable (atomicfile's one folder-fsync
	// policy) does not undo it, so Add does not report a failure for a
	// package that is installed.
	_ = atomicfile.SyncDir(filepath.Dir(dest))
	return nil
}

// writeRecord writes .objgc/records/<id>.json atomically (temp file,
// fsync, rename), replacing an earlier record of the id.
func (c *Cache) writeRecord(rec *digestRecord) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := c.mkdirAll(c.recordsDir()); err != nil {
		return err
	}
	f, err := os.CreateTemp(c.recordsDir(), ".tmp.")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = c.chownFile(f)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), c.recordPath(rec.ID))
	}
	return err
}

// unpack writes zr's entries under stage: directories and regular files
// first, links last, so that no file is ever written through a link.
func (c *Cache) unpack(ctx context.Context, zr *zip.Reader, stage string) (*digestRecord, error) {
	rec := &digestRecord{Files: map[string]string{}, Links: map[string]string{}}
	limit := c.maxUnpacked()
	type link struct{ name, target string }
	var links []link
	tr := newTree()
	for _, f := range zr.File {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name, err := cleanZipName(f.Name)
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(stage, filepath.FromSlash(name))
		mode := f.Mode()
		tr.addParents(name)
		switch {
		case mode.IsDir():
			tr.dirs[name] = true
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return nil, fmt.Errorf("entry %q: %w", f.Name, err)
			}
		case mode&fs.ModeSymlink != 0:
			rc, err := f.Open()
			if err != nil {
				return nil, fmt.Errorf("entry %q: %w", f.Name, err)
			}
			target, err := io.ReadAll(io.LimitReader(rc, 4096))
			rc.Close()
			if err != nil {
				return nil, fmt.Errorf("entry %q: %w", f.Name, err)
			}
			t := string(target)
			if t == "" || strings.HasPrefix(t, "/") || strings.Contains(t, `\`) || strings.Contains(t, "\x00") {
				return nil, fmt.Errorf("link %q points to %q, outside the package", f.Name, t)
			}
			links = append(links, link{name, t})
			tr.links[name] = t
		case mode.IsRegular():
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return nil, fmt.Errorf("entry %q: %w", f.Name, err)
			}
			n, sum, err := extractFile(f, dst, limit-rec.Size)
			if err != nil {
				return nil, err
			}
			rec.Size += n
			rec.Files[name] = sum
			tr.files[name] = true
		default:
			return nil, fmt.Errorf("entry %q is not a regular file, directory or link", f.Name)
		}
	}
	// Links through other links can climb out even when each target looks
	// local by name: resolve each one, link by link, before creating any.
	if err := tr.checkLinks(); err != nil {
		return nil, err
	}
	for _, l := range links {
		dst := filepath.Join(stage, filepath.FromSlash(l.name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, fmt.Errorf("link %q: %w", l.name, err)
		}
		if err := os.Symlink(filepath.FromSlash(l.target), dst); err != nil {
			return nil, fmt.Errorf("link %q: %w", l.name, err)
		}
		rec.Links[l.name] = l.target
	}
	if len(rec.Links) == 0 {
		rec.Links = nil
	}
	return rec, nil
}

// extractFile writes one regular file, at most limit bytes, and returns
// its size and sha256.
func extractFile(f *zip.File, dst string, limit int64) (int64, string, error) {
	rc, err := f.Open()
	if err != nil {
		return 0, "", fmt.Errorf("entry %q: %w", f.Name, err)
	}
	defer rc.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, canonicalMode(f.Mode()))
	if err != nil {
		return 0, "", fmt.Errorf("entry %q: %w", f.Name, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(rc, limit+1))
	if err == nil && n > limit {
		err = errors.New("archive expands past the size limit")
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, "", fmt.Errorf("entry %q: %w", f.Name, err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// hashFile returns the hex sha256 of the file at p.
func hashFile(p string, h hash.Hash) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h.Reset()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// removeOutdatedIDs removes the other ids of fullName/version (a package
// re-uploaded, or the engine's copy of what objgc added) as the engine's
// cleanup does after each download (ApiPackageLoader.try_cleanup_cache):
// each only if its usage lock can be taken exclusively without waiting.
func (c *Cache) removeOutdatedIDs(fullName, version, keep string) (removed, kept []string) {
	names, err := readDirNames(filepath.Join(c.fullNameDir(fullName), version))
	if err != nil {
		return nil, nil
	}
	for _, id := range names {
		if id == keep || !idRE.MatchString(id) {
			continue
		}
		ok, err := c.removeEntry(fullName, version, id)
		switch {
		case err != nil:
			kept = append(kept, id)
		case ok:
			removed = append(removed, id)
		default:
			kept = append(kept, id)
		}
	}
	sort.Strings(removed)
	sort.Strings(kept)
	return removed, kept
}

// removeEntry removes <fullName>/<version>/<id> if nobody uses it (see
// claimEntry) and deletes it. false, nil: in use, or already gone.
func (c *Cache) removeEntry(fullName, version, id string) (bool, error) {
	trash, ok, err := c.claimEntry(fullName, version, id, "")
	if err != nil || !ok {
		return false, err
	}
	if err := os.RemoveAll(trash); err != nil {
		return true, fmt.Errorf("removing %s: %w", trash, err)
	}
	return true, nil
}

// claimEntry takes the usage lock of id exclusively without waiting and,
// holding it, renames the package directory into .objgc/trash/ (one
// rename: the engine, which loads <FullName>/<version>/<id>, never sees a
// half-deleted package), removes objgc's record and marker of the id and
// deletes both lock files, as the engine does after its cleanup; then it
// releases the lock. It returns the trash directory for the caller to
// delete. ok is false when the package is in use or already gone.
//
// The lock files are deleted while the lock is held, not after (the
// engine's order): a process waiting on the lock then finds, once it has
// it, that the path names another file or none, and locks again (lockAt);
// deleted after the release, a waiter could take the lock and check the
// path just before the deletion, and hold a lock nobody else sees.
//
// installedBy is the package's Entry.InstalledBy when the caller read it
// (its record need not be read again), "" when it did not.
func (c *Cache) claimEntry(fullName, version, id, installedBy string) (trash string, ok bool, err error) {
	unlock, err := c.tryLockAt(c.usageLockPath(id), lockfile.Exclusive)
	if err != nil {
		return "", false, err
	}
	if unlock == nil {
		return "", false, nil
	}
	defer unlock()
	dir := c.entryDir(fullName, version, id)
	trash, err = c.trashName()
	if err != nil {
		return "", false, fmt.Errorf("removing %s: %w", dir, err)
	}
	if err := os.Rename(dir, trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, nil // someone removed it before us
		}
		return "", false, fmt.Errorf("removing %s: %w", dir, err)
	}
	c.forget(fullName, version, id, installedBy)
	os.Remove(c.downloadLockPath(id))
	os.Remove(c.usageLockPath(id))
	return trash, true, nil
}

// forget removes objgc's record of id (when it is the record of this
// package: installedBy says, or the record is read to find out) and its
// last-use marker.
func (c *Cache) forget(fullName, version, id, installedBy string) {
	switch installedBy {
	case InstalledByObjgc:
		os.Remove(c.recordPath(id))
	case "":
		if rec, err := c.readRecordHeader(id); err == nil && rec.FullName == fullName && rec.Version == version {
			os.Remove(c.recordPath(id))
		}
	}
	os.Remove(c.lastUsePath(id))
}

// trashName returns a fresh name in .objgc/trash/ for a package
// directory to be renamed to before it is deleted: out of the engine's
// sight (it never looks in .objgc/), on the same file system, so the
// rename is one step. A prune removes those left by killed processes.
func (c *Cache) trashName() (string, error) {
	if err := c.mkdirAll(c.trashDir()); err != nil {
		return "", err
	}
	var b [8]byte
	rand.Read(b[:])
	return filepath.Join(c.trashDir(), hex.EncodeToString(b[:])), nil
}
