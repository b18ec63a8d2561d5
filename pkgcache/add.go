package pkgcache

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/objgc/objgc/internal/lockfile"
)

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
// callers that read the package take it again with acquireUsage or a
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

// AddSource is Add (Reinstall with force) of src read from s, which
// OpenSource opened ahead.
func (c *Cache) AddSource(ctx context.Context, src string, s *Source, force bool) (AddResult, error) {
	return c.addFrom(ctx, src, s, force)
}

func (c *Cache) add(ctx context.Context, src string, force bool) (AddResult, error) {
	return c.addFrom(ctx, src, nil, force)
}

func (c *Cache) addFrom(ctx context.Context, src string, pre *Source, force bool) (AddResult, error) {
	if c.ownerErr != nil {
		return AddResult{}, c.ownerErr
	}
	arc, err := c.fetch(ctx, src, pre)
	if err != nil {
		return AddResult{}, err
	}
	defer arc.remove()
	zr, err := zip.NewReader(arc.f, arc.size)
	if err != nil {
		return AddResult{}, &InvalidPackageError{Source: src, Reason: fmt.Sprintf("not a zip archive, or a truncated one: %v", err)}
	}
	m, err := c.preflight(zr)
	if err != nil {
		return AddResult{}, &InvalidPackageError{Source: src, Reason: err.Error()}
	}
	res, err := c.install(ctx, src, zr, m, arc.id, force)
	res.Source = src
	return res, err
}

// preflight checks entry names and declared sizes and reads the manifest,
// before any lock is taken or anything is written.
func (c *Cache) preflight(zr *zip.Reader) (*manifest, error) {
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
	return parseManifest(data)
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

func (c *Cache) install(ctx context.Context, src string, zr *zip.Reader, m *manifest, id string, force bool) (res AddResult, err error) {
	dest := c.entryDir(m.FullName, m.Version, id)
	// Lock files this add creates go again if it is rejected: nothing of
	// a rejected add is left behind. The id is the archive's sha256,
	// which the engine (catalog ids) never uses; another objgc add of the
	// same archive that opened one of them finds, once it holds the
	// lock, that the path names no file any more, and opens it again.
	var created []string
	for _, p := range []string{c.usageLockPath(id), c.downloadLockPath(id)} {
		if _, err := c.lstat(p); errors.Is(err, fs.ErrNotExist) {
			created = append(created, p)
		}
	}
	defer func() {
		if err != nil && errors.Is(err, ErrInvalidPackage) {
			for _, p := range created {
				c.remove(p)
			}
		}
	}()
	var unlockUsage func()
	if force {
		// Readers of the copy being replaced must be gone, and no new one
		// may start until the new copy is in place: the removal protocol.
		unlockUsage, err = c.tryLockAt(c.usageLockPath(id), lockfile.Exclusive)
		if err == nil && unlockUsage == nil {
			err = fmt.Errorf("package %s %s (%s) is in use by a plan or apply; try again when it is not: %w", m.FullName, m.Version, id, ErrInUse)
		}
	} else if !idRE.MatchString(id) {
		err = fmt.Errorf("usage lock: %q is not a package id", id)
	} else {
		unlockUsage, err = c.lockAt(ctx, c.usageLockPath(id), lockfile.Shared)
	}
	if err != nil {
		return AddResult{}, fmt.Errorf("adding %s: %w", src, err)
	}
	defer unlockUsage()
	if force || !c.isDir(dest) {
		unlockDL, err := c.lockAt(ctx, c.downloadLockPath(id), lockfile.Exclusive)
		if err != nil {
			return AddResult{}, fmt.Errorf("adding %s: %w", src, err)
		}
		defer unlockDL()
		if force || !c.isDir(dest) {
			res.Replaced = c.isDir(dest)
			if err := c.unpackAndRename(ctx, src, zr, m, id, dest); err != nil {
				return AddResult{}, err
			}
			res.Installed = true
		}
	}
	// The use is recorded once the package is there.
	c.touchLastUse(id)
	res.RemovedIDs, res.KeptIDs = c.removeOutdatedIDs(m.FullName, m.Version, id)
	e, err := c.entry(m.FullName, m.Version, id)
	if err != nil {
		return AddResult{}, fmt.Errorf("adding %s: %w", src, err)
	}
	e.InUse = true // by us, until we return
	res.Entry = e
	return res, nil
}

// unpackAndRename runs with the download lock held.
func (c *Cache) unpackAndRename(ctx context.Context, src string, zr *zip.Reader, m *manifest, id, dest string) (err error) {
	if err := c.mkdirAll(c.tmpDir()); err != nil {
		return fmt.Errorf("adding %s: %w", src, err)
	}
	stage, err := c.mkdirTemp(c.tmpDir(), id+".stage.")
	if err != nil {
		return fmt.Errorf("adding %s: %w", src, err)
	}
	defer func() {
		if err != nil {
			c.removeAll(stage)
		}
	}()
	sr, err := c.subRoot(stage)
	if err != nil {
		return fmt.Errorf("adding %s: %w", src, err)
	}
	defer sr.Close()
	rec, err := unpack(ctx, zr, sr, c.maxUnpacked())
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
	p, err := loadPackageIn(sr, stage)
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
	if err := syncStage(sr, stage, files); err != nil {
		return fmt.Errorf("adding %s: %w", src, err)
	}
	// Reinstall: the damaged copy is moved aside first (the caller holds
	// the usage lock exclusively), and comes back if the new one cannot
	// take its place.
	var old string
	if c.isDir(dest) {
		if old, err = c.trashName(); err != nil {
			return fmt.Errorf("adding %s: %w", src, err)
		}
		if err := c.rename(dest, old); err != nil {
			return fmt.Errorf("adding %s: %w", src, err)
		}
		defer func() {
			if err != nil {
				c.rename(old, dest)
			} else {
				c.removeAll(old)
			}
		}()
	}
	// Someone may remove an empty <FullName>/<version>/ parent between
	// MkdirAll and Rename (objgc never does, a person might); try again
	// then.
	for attempt := 0; ; attempt++ {
		if err = c.mkdirAll(filepath.Dir(dest)); err == nil {
			err = c.rename(stage, dest)
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
	if d, err := c.openNoFollow(filepath.Dir(dest), os.O_RDONLY|dirFlag, true); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// writeRecord writes .objgc/records/<id>.json atomically (temp file,
// fsync, rename), replacing an earlier record of the id.
func (c *Cache) writeRecord(rec *digestRecord) error {
	if !idRE.MatchString(rec.ID) {
		return fmt.Errorf("digests record: %q is not a package id", rec.ID)
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := c.mkdirAll(c.recordsDir()); err != nil {
		return err
	}
	f, name, err := c.createTemp(c.recordsDir(), ".tmp.")
	if err != nil {
		return err
	}
	defer c.remove(name)
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
		err = c.rename(name, c.recordPath(rec.ID))
	}
	return err
}

// unpack writes zr's entries beneath stage (a handle on the staging
// directory, which nothing written can leave): directories and regular
// files first, links last, so that no file is ever written through a
// link.
func unpack(ctx context.Context, zr *zip.Reader, stage *os.Root, limit int64) (*digestRecord, error) {
	rec := &digestRecord{Files: map[string]string{}, Links: map[string]string{}}
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
		dst := filepath.FromSlash(name)
		mode := f.Mode()
		tr.addParents(name)
		switch {
		case mode.IsDir():
			tr.dirs[name] = true
			if err := stage.MkdirAll(dst, 0o755); err != nil {
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
			if d := filepath.Dir(dst); d != "." {
				if err := stage.MkdirAll(d, 0o755); err != nil {
					return nil, fmt.Errorf("entry %q: %w", f.Name, err)
				}
			}
			n, sum, err := extractFile(f, stage, dst, limit-rec.Size)
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
		dst := filepath.FromSlash(l.name)
		if d := filepath.Dir(dst); d != "." {
			if err := stage.MkdirAll(d, 0o755); err != nil {
				return nil, fmt.Errorf("link %q: %w", l.name, err)
			}
		}
		if err := stage.Symlink(filepath.FromSlash(l.target), dst); err != nil {
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
func extractFile(f *zip.File, stage *os.Root, dst string, limit int64) (int64, string, error) {
	rc, err := f.Open()
	if err != nil {
		return 0, "", fmt.Errorf("entry %q: %w", f.Name, err)
	}
	defer rc.Close()
	out, err := stage.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, canonicalMode(f.Mode()))
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
