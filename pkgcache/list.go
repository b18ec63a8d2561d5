package pkgcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/objgc/objgc/internal/lockfile"
)

// Entry is one cached package: <root>/<FullName>/<Version>/<ID>/.
type Entry struct {
	FullName string `json:"full_name"`
	Version  string `json:"version"`
	ID       string `json:"id"`
	Dir      string `json:"dir"`
	Size     int64  `json:"size"` // bytes of the unpacked files
	// Installed is when the package was renamed into place (objgc's
	// record), or the package directory's mtime for one the engine
	// unpacked (its last entry's creation: the end of the unpack).
	Installed time.Time `json:"installed"`
	// LastUse is objgc's last-use marker (hourly resolution); for a
	// package the engine unpacked, the later of it and the access time of
	// manifest.yaml, which the engine reads each time a deployment loads
	// the package (see docs/cache.md for what the file system's atime
	// options make of it). Zero if neither is known.
	LastUse time.Time `json:"last_use"`
	InUse   bool      `json:"in_use"` // some process (objgc or the engine) holds its usage lock
	// InUseReason says why a package is in use when it is not that its
	// usage lock is held: a process has its deleted usage lock file open
	// (an orphaned lock), or its lock file is missing where that cannot
	// be checked (docs/cache.md, "Orphaned locks").
	InUseReason string `json:"in_use_reason,omitempty"`
	// InstalledBy is installedByObjgc for a package objgc added (it has a
	// digests record), installedByEngine for one murano-engine unpacked.
	InstalledBy string `json:"installed_by"`

	// partial: only the names were read (Size, Installed and LastUse are
	// zero); see list.
	partial bool
}

// UnusedSince is when the package was last used or, if later,
// installed: the time Prune's unused-for and size policies count from,
// and what cache list shows as its last use.
func (e Entry) UnusedSince() time.Time { return e.lastUseOrInstalled() }

// lastUseOrInstalled is the time the LRU and unused-for policies compare.
func (e Entry) lastUseOrInstalled() time.Time {
	if e.LastUse.After(e.Installed) {
		return e.LastUse
	}
	return e.Installed
}

// entry reads what List reports about one package directory.
func (c *Cache) entry(fullName, version, id string) (Entry, error) {
	return c.entryInfo(nil, fullName, version, id, true)
}

// entryInfo reads one package's record (from the records directory
// recs when not nil), marker and, withInUse, its lock.
func (c *Cache) entryInfo(recs *os.File, fullName, version, id string, withInUse bool) (Entry, error) {
	dir := c.entryDir(fullName, version, id)
	e := Entry{FullName: fullName, Version: version, ID: id, Dir: dir, InstalledBy: installedByEngine}
	if rec, err := c.readRecordHeaderIn(recs, id); err == nil && rec.matches(fullName, version, id) {
		if recs == nil && !c.isDir(dir) { // a listing (recs) just saw the directory
			return e, fs.ErrNotExist
		}
		e.Size, e.Installed, e.InstalledBy = rec.Size, rec.Installed, installedByObjgc
	} else {
		st, serr := c.lstat(dir)
		if serr != nil {
			return e, serr
		}
		if !st.IsDir() {
			return e, fmt.Errorf("%s is not a directory", dir)
		}
		e.Installed = st.ModTime()
		e.Size = c.dirSize(dir)
	}
	e.LastUse = c.lastUse(id)
	// The engine loads only the ids the catalog names, never objgc's.
	if e.InstalledBy == installedByEngine {
		if st, err := c.lstat(filepath.Join(dir, "manifest.yaml")); err == nil && st.Mode().IsRegular() {
			if at, ok := accessTime(st); ok && at.After(e.LastUse) {
				e.LastUse = at
			}
		}
	}
	if withInUse {
		e.InUse = c.inUse(id)
	}
	return e, nil
}

// matches reports whether a record describes the package at
// <fullName>/<version>/<id>: a record is believed only about its own
// place.
func (r *digestRecord) matches(fullName, version, id string) bool {
	return r.FullName == fullName && r.Version == version && r.ID == id
}

// readRecord reads the whole digests record of id, beneath the root.
func (c *Cache) readRecord(id string) (*digestRecord, error) {
	data, err := c.readFile(c.recordPath(id), maxRecordSize)
	if err != nil {
		return nil, err
	}
	var rec digestRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", c.recordPath(id), err)
	}
	return &rec, nil
}

// readRecordHeader reads the digests record of id without its file list.
func (c *Cache) readRecordHeader(id string) (*digestRecord, error) {
	return c.readRecordHeaderIn(nil, id)
}

// openRecords opens .objgc/records/ beneath the root (not through a
// link) for readRecordHeaderIn.
func (c *Cache) openRecords() (*os.File, error) {
	return c.openNoFollow(c.recordsDir(), os.O_RDONLY|dirFlag, true)
}

// readRecordHeaderIn reads the digests record of id from the records
// directory recs (opened here when nil) without its file list.
func (c *Cache) readRecordHeaderIn(recs *os.File, id string) (*digestRecord, error) {
	if recs == nil && c.h != nil && c.h.recordsDir != nil {
		recs = c.h.recordsDir
	}
	if recs == nil {
		d, err := c.openRecords()
		if err != nil {
			return nil, err
		}
		defer d.Close()
		recs = d
	}
	// The header fields come first, then the file list: the first 4 KiB
	// hold the header unless it is unusually long.
	const headSize = 4096
	path := c.recordPath(id)
	data, err := readHeadAt(recs, id+".json", path, headSize)
	if err != nil {
		return nil, err
	}
	files := []byte(`"files"`)
	i := bytes.Index(data, files)
	if i < 0 && len(data) == headSize {
		if data, err = c.readFile(path, maxRecordSize); err != nil {
			return nil, err
		}
		i = bytes.Index(data, files)
	}
	var rec struct {
		FullName  string    `json:"full_name"`
		Version   string    `json:"version"`
		ID        string    `json:"id"`
		Installed time.Time `json:"installed"`
		Size      int64     `json:"size"`
	}
	// Decode only up to the file list (Clip: the '}' must not overwrite
	// data, which the fallback below decodes whole).
	head := data
	if i > 0 {
		head = append(slices.Clip(bytes.TrimRight(data[:i], " \n\t,")), '}')
	}
	if err := json.Unmarshal(head, &rec); err != nil {
		if err := json.Unmarshal(data, &rec); err != nil {
			return nil, err
		}
	}
	return &digestRecord{FullName: rec.FullName, Version: rec.Version, ID: rec.ID, Installed: rec.Installed, Size: rec.Size}, nil
}

// maxRecordSize bounds a digests record read whole: one sha256 line per
// file of a package of at most DefaultMaxEntries entries fits many times.
const maxRecordSize = 64 << 20

// dirSize is the bytes of the regular files under dir, beneath the
// root, links not followed.
func (c *Cache) dirSize(dir string) int64 {
	var n int64
	_ = c.walk(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

type entryKey struct{ fullName, version, id string }

// Unclassified is a name under the cache root that is neither a package
// (<FullName>/<version>/<id>/, each a directory), nor an engine's lock
// file, nor objgc's own (.objgc/ and what belongs in it): a link where the
// layout has none, a file where a directory belongs, a name Murano would
// not give. objgc never follows, reads or deletes it; List reports it,
// Verify calls it a problem, and Prune counts its bytes towards MaxSize,
// so that a cap is never reported met while bytes it cannot account for
// remain.
type Unclassified struct {
	Path    string `json:"path"`
	Problem string `json:"problem"`
	Size    int64  `json:"size"` // bytes of its regular files (a link: 0, it is not followed)
}

// What an unclassified name is, as Verify and List say it.
const (
	problemRoot    = "not a package's <FullName>/ directory nor an <id>_usage.lock or <id>_download.lock file"
	problemVersion = "not a <version>/ directory"
	problemID      = "not a package directory named by its id"
)

// unclassified describes the name at path of type mode that is not what
// the layout wants there.
func (c *Cache) unclassified(path string, mode fs.FileMode, problem string, withSize bool) Unclassified {
	u := Unclassified{Path: path, Problem: problem}
	switch {
	case mode&fs.ModeSymlink != 0:
		to := "?"
		if rel, err := c.rel(path); err == nil {
			if t, err := c.fsys.Readlink(rel); err == nil {
				to = t
			}
		}
		u.Problem = fmt.Sprintf("a symbolic link (to %s), which murano-engine never makes and objgc never follows: %s", to, problem)
	case withSize && mode.IsDir():
		u.Size = c.dirSize(path)
	case withSize && mode.IsRegular():
		if st, err := c.lstat(path); err == nil {
			u.Size = st.Size()
		}
	}
	return u
}

// fullNames lists the FullName directories at the root (real directories,
// not links, named as Murano names packages) and, in other, every name
// there that is neither one, nor a lock file, nor .objgc/.
func (c *Cache) fullNames(withSize bool) (names []string, other []Unclassified, err error) {
	ents, err := c.readDir(c.root)
	if err != nil {
		return nil, nil, fmt.Errorf("listing package cache: %w", err)
	}
	for _, e := range ents {
		p := filepath.Join(c.root, e.name)
		switch {
		case e.name == metaDirName && e.isDir():
		case e.mode.IsRegular() && isLockName(e.name):
		case e.isDir() && validFullName(e.name):
			names = append(names, e.name)
		default:
			other = append(other, c.unclassified(p, e.mode, problemRoot, withSize))
		}
	}
	return names, other, nil
}

func isLockName(name string) bool {
	if _, ok := lockID(name, usageSuffix); ok {
		return true
	}
	_, ok := lockID(name, downloadSuffix)
	return ok
}

// scan lists <FullName>/<version>/<id> names without reading them.
func (c *Cache) scan() ([]entryKey, error) {
	names, _, err := c.fullNames(false)
	if err != nil {
		return nil, err
	}
	var keys []entryKey
	for _, fn := range names {
		k, _ := c.scanFullName(fn, false)
		keys = append(keys, k...)
	}
	return keys, nil
}

// scanFullName lists the packages of <root>/<fn>/, sorted by version (as
// strings) and id, so that the ids of one version are next to each other;
// a directory that vanishes meanwhile (a prune, the engine's cleanup)
// lists nothing. Names that are not a version directory, or not a package
// directory named by an id (links among them: never followed), are
// returned in other.
func (c *Cache) scanFullName(fn string, withSize bool) (keys []entryKey, other []Unclassified) {
	fdir := c.fullNameDir(fn)
	var f *os.File
	var err error
	if c.rootDir != nil {
		f, err = c.openDirAt(c.rootDir, c.root, fn)
	} else {
		f, err = c.openNoFollow(fdir, os.O_RDONLY|dirFlag, true)
	}
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	versions, err := readDirFile(f, fdir)
	if err != nil {
		return nil, nil
	}
	for _, v := range versions {
		vdir := filepath.Join(fdir, v.name)
		if !v.isDir() || !safeComponent(v.name, versionRE) {
			other = append(other, c.unclassified(vdir, v.mode, problemVersion, withSize))
			continue
		}
		// The version directory is opened relative to the FullName
		// directory just read, without following a link.
		ids, err := c.readSubdir(f, fdir, v.name)
		if err != nil {
			continue
		}
		for _, id := range ids {
			if id.isDir() && idRE.MatchString(id.name) {
				keys = append(keys, entryKey{fn, v.name, id.name})
				continue
			}
			other = append(other, c.unclassified(filepath.Join(vdir, id.name), id.mode, problemID, withSize))
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].version != keys[j].version {
			return keys[i].version < keys[j].version
		}
		return keys[i].id < keys[j].id
	})
	return keys, other
}

// metaProblems reports what in .objgc/ is not what objgc puts there:
// links (never followed), and names of the wrong kind.
func (c *Cache) metaProblems() []Unclassified {
	meta := c.metaDir()
	st, err := c.lstat(meta)
	if err != nil {
		return nil
	}
	if !st.IsDir() {
		return []Unclassified{c.unclassified(meta, st.Mode(), "objgc's own directory, not a directory", false)}
	}
	ents, err := c.readDir(meta)
	if err != nil {
		return nil
	}
	var out []Unclassified
	for _, e := range ents {
		p := filepath.Join(meta, e.name)
		switch e.name {
		case "records", "lastuse", "tmp", "trash":
			if !e.isDir() {
				out = append(out, c.unclassified(p, e.mode, "objgc's own directory, not a directory", false))
				continue
			}
			inner, err := c.readDir(p)
			if err != nil {
				continue
			}
			for _, f := range inner {
				if f.isLink() {
					out = append(out, c.unclassified(filepath.Join(p, f.name), f.mode, "in objgc's own directory", false))
				}
			}
		case "prune.lock":
			if !e.mode.IsRegular() {
				out = append(out, c.unclassified(p, e.mode, "objgc's prune lock, not a regular file", false))
			}
		default:
			if e.isLink() {
				out = append(out, c.unclassified(p, e.mode, "in objgc's own directory", false))
			}
		}
	}
	return out
}

// List returns every cached package, sorted by FullName, then version
// (semantic order, oldest first), then install time and id. A package
// removed while List runs is left out. List takes no lock that others
// wait for: InUse is tested with a non-blocking exclusive lock.
func (c *Cache) List(ctx context.Context) ([]Entry, error) {
	entries, _, err := c.list(ctx, true, false, false, false)
	return entries, err
}

// ListAll is List, and also every name under the root that is neither a
// package, nor a lock file, nor objgc's own, with its size
// (Unclassified), and what in .objgc/ is not what objgc puts there.
func (c *Cache) ListAll(ctx context.Context) ([]Entry, []Unclassified, error) {
	return c.list(ctx, true, false, false, true)
}

// list is List. With partial, a package that is the only id of its
// version is listed by name alone (Entry.partial), its record and last-use
// marker not read: prune --outdated needs them only for the packages it
// removes, and reads them then. With record, a package found in use has
// the use recorded in objgc's last-use marker (recordUse): a prune does,
// a listing that only reads (List, a dry run) does not. withSize measures
// the unclassified names (a walk of each).
func (c *Cache) list(ctx context.Context, withInUse, partial, record, withSize bool) ([]Entry, []Unclassified, error) {
	names, other, err := c.fullNames(withSize)
	if err != nil {
		return nil, nil, err
	}
	other = append(other, c.metaProblems()...)
	if c.h == nil {
		cc, closeHandles := c.withHandles(false)
		defer closeHandles()
		c = cc
	}
	var recs *os.File
	if c.h != nil {
		recs = c.h.recordsDir
	} else if recs, _ = c.openRecords(); recs != nil { // none yet: every package is the engine's
		defer recs.Close()
	}
	// Workers take one FullName at a time: its versions, their ids, and
	// each package's record, marker and lock. All of it is system calls
	// on small files and directories, so the workers outnumber the CPUs.
	// A package held through a deleted usage lock file is in use too.
	var orphans orphanScan
	if withInUse {
		orphans = c.scanOrphans()
	}
	workers := min(4*runtime.GOMAXPROCS(0), max(len(names), 1))
	found := make([][]Entry, workers)
	strays := make([][]Unclassified, workers)
	var wg sync.WaitGroup
	next := make(chan string)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for fn := range next {
				keys, odd := c.scanFullName(fn, withSize)
				strays[w] = append(strays[w], odd...)
				for i, k := range keys {
					alone := (i == 0 || keys[i-1].version != k.version) && (i == len(keys)-1 || keys[i+1].version != k.version)
					if partial && alone {
						found[w] = append(found[w], Entry{FullName: k.fullName, Version: k.version, ID: k.id, Dir: c.entryDir(k.fullName, k.version, k.id), partial: true})
						continue
					}
					if e, err := c.entryInfo(recs, k.fullName, k.version, k.id, withInUse); err == nil {
						if why := orphans.busy(k.id); withInUse && !e.InUse && why != "" {
							e.InUse, e.InUseReason = true, why
						}
						if e.InUse && record {
							c.recordUse(&e)
						}
						found[w] = append(found[w], e)
					}
				}
			}
		}()
	}
	var cerr error
	for _, fn := range names {
		if cerr = ctx.Err(); cerr != nil {
			break
		}
		next <- fn
	}
	close(next)
	wg.Wait()
	if cerr != nil {
		return nil, nil, cerr
	}
	var out []Entry
	for _, f := range found {
		out = append(out, f...)
	}
	for _, s := range strays {
		other = append(other, s...)
	}
	sort.Slice(out, func(i, j int) bool { return entryLess(out[i], out[j]) })
	sort.Slice(other, func(i, j int) bool { return other[i].Path < other[j].Path })
	return out, other, nil
}

func entryLess(a, b Entry) bool {
	if a.FullName != b.FullName {
		return a.FullName < b.FullName
	}
	if c := compareVersions(a.Version, b.Version); c != 0 {
		return c < 0
	}
	if !a.Installed.Equal(b.Installed) {
		return a.Installed.Before(b.Installed)
	}
	return a.ID < b.ID
}

// compareVersions orders two package versions as semantic versions
// (Murano uses semantic_version): numeric dot-separated parts compare as
// numbers, a pre-release ("1.0.0-rc1") sorts before its release, build
// metadata ("+x") is ignored; parts that are not numbers compare as
// strings. It returns -1, 0 or 1.
func compareVersions(a, b string) int {
	a, _, _ = strings.Cut(a, "+")
	b, _, _ = strings.Cut(b, "+")
	ar, apre, aHasPre := strings.Cut(a, "-")
	br, bpre, bHasPre := strings.Cut(b, "-")
	if c := compareDotted(ar, br); c != 0 {
		return c
	}
	switch {
	case aHasPre && !bHasPre:
		return -1
	case !aHasPre && bHasPre:
		return 1
	}
	return compareDotted(apre, bpre)
}

func compareDotted(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y string
		if i < len(as) {
			x = as[i]
		}
		if i < len(bs) {
			y = bs[i]
		}
		xn, xerr := strconv.ParseUint(x, 10, 64)
		yn, yerr := strconv.ParseUint(y, 10, 64)
		switch {
		case xerr == nil && yerr == nil:
			if xn != yn {
				if xn < yn {
					return -1
				}
				return 1
			}
		case x != y:
			if x == "" { // 1.0 < 1.0.x
				return -1
			}
			if y == "" {
				return 1
			}
			if xerr == nil { // numbers before words, as semver
				return -1
			}
			if yerr == nil {
				return 1
			}
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Path returns the directory of the newest cached package fullName at
// version (the most recently installed id), or of its highest cached
// version when version is "". It takes no lock: a caller that reads the
// directory must hold its usage lock (see Session). The error wraps
// ErrNotFound when nothing matches.
func (c *Cache) Path(fullName, version string) (string, error) {
	e, err := c.newest(fullName, version)
	if err != nil {
		return "", err
	}
	return e.Dir, nil
}

// Lookup returns the entry Path describes: the newest cached package
// fullName at version, or at its highest cached version when version is
// "", with its Installed time (not Size, LastUse or InUse). It takes no
// lock. The error wraps ErrNotFound when nothing matches.
func (c *Cache) Lookup(fullName, version string) (Entry, error) {
	return c.newest(fullName, version)
}

// installed returns the entry of a package with its Installed time and
// InstalledBy only (no size, last use or in-use), false when it is gone.
func (c *Cache) installed(fullName, version, id string) (Entry, bool) {
	e := Entry{FullName: fullName, Version: version, ID: id, Dir: c.entryDir(fullName, version, id), InstalledBy: installedByEngine}
	st, err := c.lstat(e.Dir)
	if err != nil || !st.IsDir() {
		return e, false
	}
	e.Installed = st.ModTime()
	if rec, err := c.readRecordHeader(id); err == nil && rec.matches(fullName, version, id) {
		e.Installed, e.InstalledBy = rec.Installed, installedByObjgc
	}
	return e, true
}

// newest picks, without locks, the entry Path describes. The error wraps
// ErrOldLayout when packages/<fullName>/ holds a directory of the old
// layout: its packages would be missed.
func (c *Cache) newest(fullName, version string) (Entry, error) {
	if !validFullName(fullName) || (version != "" && !safeComponent(version, versionRE)) {
		return Entry{}, fmt.Errorf("package %s %s: %w", fullName, version, ErrNotFound)
	}
	keys, _ := c.scanFullName(fullName, false)
	// Candidates: the ids of version, or of the highest version first.
	sort.SliceStable(keys, func(i, j int) bool { return compareVersions(keys[i].version, keys[j].version) > 0 })
	var best Entry
	found := false
	for _, k := range keys {
		if version != "" && k.version != version {
			continue
		}
		if found && k.version != best.Version {
			break // the highest version with a readable package wins
		}
		e, ok := c.installed(fullName, k.version, k.id)
		if !ok {
			continue
		}
		if !found || e.Installed.After(best.Installed) || e.Installed.Equal(best.Installed) && e.ID > best.ID {
			best, found = e, true
		}
	}
	if found {
		return best, nil
	}
	if version == "" {
		return Entry{}, fmt.Errorf("package %s: %w", fullName, ErrNotFound)
	}
	return Entry{}, fmt.Errorf("package %s version %s: %w", fullName, version, ErrNotFound)
}

// Problem is one finding of Verify.
type Problem struct {
	FullName string `json:"full_name,omitempty"`
	Version  string `json:"version,omitempty"`
	ID       string `json:"id,omitempty"`
	Path     string `json:"path"` // the file or directory at fault
	Problem  string `json:"problem"`
	// InstalledBy is the package's origin, as Entry.InstalledBy; empty
	// for a name that belongs to no package. It decides the fix: a
	// package objgc added is added again from its source (Add with
	// Force), one the engine unpacked is removed, for the engine to
	// download again.
	InstalledBy string `json:"installed_by,omitempty"`
}

// VerifyResult is what Verify checked and found.
type VerifyResult struct {
	Checked  int       `json:"checked"` // packages checked
	Problems []Problem `json:"problems"`
	// Engine counts the packages the engine unpacked: they have no
	// digests record, so Verify could only check that their manifest and
	// class files parse.
	Engine int `json:"engine"`
	// InUse are the packages not checked because another process was
	// still unpacking them (their download lock held, at the path or
	// through a deleted lock file, after Verify waited UnpackWait; or
	// their files kept changing while read): not a damage, verify them
	// again later.
	InUse []Problem `json:"in_use"`
}

// UnpackWait is how long Verify waits for a package being unpacked
// (its download lock held by murano-engine) before it reports it in use.
const UnpackWait = 10 * time.Second

// Verify checks every package: one objgc added has its digests record,
// and its files and links are exactly those recorded at unpack time, with
// the same sha256; one the engine unpacked has no record (counted in
// Engine), and its manifest and class files must parse (read as data,
// with the limits of loadPackage). It holds each package's usage lock
// (shared, without marking a use) while it checks it, so no prune and no
// engine cleanup removes it meanwhile. The engine unpacks in place under
// its download lock (ApiPackageLoader._get_package_by_definition), so a
// package the engine unpacked is read only once its download lock is
// free, as plan does; one that does not load is read again holding its
// download lock until its files stay unchanged (see verifyEngineEntry).
// One still being unpacked after UnpackWait, or still changing, is
// reported in InUse, never as damaged. Names where the layout wants
// something else are problems too. The error is non-nil only when the
// cache cannot be read or ctx ends.
func (c *Cache) Verify(ctx context.Context) (VerifyResult, error) {
	var res VerifyResult
	if c.ownerErr != nil {
		return res, c.ownerErr
	}
	names, other, err := c.fullNames(false)
	if err != nil {
		return res, err
	}
	other = append(other, c.metaProblems()...)
	var keys []entryKey
	for _, fn := range names {
		k, odd := c.scanFullName(fn, false)
		keys = append(keys, k...)
		other = append(other, odd...)
	}
	sort.Slice(other, func(i, j int) bool { return other[i].Path < other[j].Path })
	for _, u := range other {
		res.Problems = append(res.Problems, Problem{Path: u.Path, Problem: u.Problem})
	}
	h := sha256.New()
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		unlock, err := c.lockAt(ctx, c.usageLockPath(k.id), lockfile.Shared)
		if err != nil {
			return res, err
		}
		e, ok := c.installed(k.fullName, k.version, k.id)
		if ok {
			res.Checked++
			var probs []Problem
			if e.InstalledBy == installedByObjgc {
				probs = c.verifyEntry(ctx, k, e.Dir, h)
			} else {
				res.Engine++
				var unpacking string
				probs, unpacking = c.verifyEngineEntry(ctx, e)
				if unpacking != "" {
					res.Checked--
					res.Engine--
					res.InUse = append(res.InUse, Problem{FullName: k.fullName, Version: k.version, ID: k.id, Path: e.Dir, Problem: unpacking})
				}
				if rec, err := c.readRecordHeader(k.id); err == nil && !rec.matches(k.fullName, k.version, k.id) {
					// A record of this id that describes another place
					// is not believed: said, never followed.
					probs = append(probs, Problem{Path: c.recordPath(k.id), Problem: fmt.Sprintf("digests record describes %s %s (%s), not this package: not believed; the package counts as the engine's", rec.FullName, rec.Version, rec.ID)})
				}
			}
			for _, p := range probs {
				p.FullName, p.Version, p.ID, p.InstalledBy = k.fullName, k.version, k.id, e.InstalledBy
				res.Problems = append(res.Problems, p)
			}
		}
		unlock()
	}
	return res, nil
}

// verifyEngineEntry checks a package the engine unpacked, holding its
// usage lock: it waits (up to UnpackWait) for the download lock of a
// running unpack, then loads the package. Holding the usage lock shared
// does not keep the engine off the package: a deployment holds it shared
// too, and Murano 14's _get_package_by_definition deletes a cached
// package that does not load for it (shutil.rmtree, before it takes the
// download lock), then downloads and unpacks it again under the download
// lock, in place. A load that fails may therefore have read a package
// being deleted or unpacked again. So a package that does not load is
// checked again (settle): it is reported damaged only when it fails to
// load twice, each time read holding its download lock (shared) with its
// files unchanged from before the load to after it, and unchanged between
// the two reads too; one that keeps changing, or whose download lock a
// process holds (at the path or through a deleted lock file), is being
// unpacked (unpacking, not a problem).
func (c *Cache) verifyEngineEntry(ctx context.Context, e Entry) (probs []Problem, unpacking string) {
	const busy = "not verified: being unpacked by another process (its download lock is held); verify again later"
	wctx, cancel := context.WithTimeout(ctx, UnpackWait)
	unlock, err := c.lockAt(wctx, c.downloadLockPath(e.ID), lockfile.Shared)
	cancel()
	if err != nil {
		return nil, busy
	}
	unlock()
	if _, err := c.loadEntry(ctx, e.Dir); err == nil {
		return nil, ""
	}
	return c.settle(ctx, e)
}

// settleTries is how many times verify reads a package of the engine's
// that does not load before it calls it being unpacked; settlePause is
// the pause between two reads, long enough for a deletion or an unpack of
// a small package to show in the files.
const (
	settleTries = 8
	settlePause = 250 * time.Millisecond
)

// settle re-checks the engine's package e, which did not load (see
// verifyEngineEntry).
func (c *Cache) settle(ctx context.Context, e Entry) (probs []Problem, unpacking string) {
	const (
		busy     = "not verified: being unpacked by another process (its download lock is held); verify again later"
		changing = "not verified: its files changed while it was read (murano-engine deletes and unpacks again a package that does not load for it); verify again later"
	)
	var last dirState
	var lastErr error
	for try := range settleTries {
		if try > 0 {
			select {
			case <-ctx.Done():
				return nil, changing
			case <-time.After(settlePause):
			}
		}
		wctx, cancel := context.WithTimeout(ctx, UnpackWait)
		unlock, err := c.lockAt(wctx, c.downloadLockPath(e.ID), lockfile.Shared)
		cancel()
		if err != nil {
			return nil, busy
		}
		before, ok := c.dirState(e.Dir)
		if !ok {
			unlock()
			return nil, "" // removed meanwhile
		}
		_, loadErr := c.loadEntry(ctx, e.Dir)
		after, _ := c.dirState(e.Dir)
		// A process unpacking under a download lock file the engine's
		// cleanup deleted is not kept off by the lock just taken.
		orphan := len(c.scanOrphans().downloading[e.ID]) > 0
		unlock()
		if loadErr == nil {
			return nil, ""
		}
		if orphan {
			last = nil
			continue
		}
		if !before.equal(after) {
			last = nil // read while it changed
			continue
		}
		if last != nil && last.equal(after) && lastErr.Error() == loadErr.Error() {
			return []Problem{{Path: e.Dir, Problem: "installed by the engine (no digests recorded), and it does not load: " + loadErr.Error()}}, ""
		}
		last, lastErr = after, loadErr
		if settleReadHook != nil {
			settleReadHook(try)
		}
	}
	return nil, changing
}

// settleReadHook, when set (by tests only), runs after each read of
// settle that found the package unchanged and not loading: the test
// changes the package there, as the engine may between two reads.
var settleReadHook func(try int)

// dirState is what a package directory holds, to tell whether it changed
// between two readings: every name beneath it (the directory itself as
// "."), with what lstat said of it.
type dirState map[string]fs.FileInfo

// dirState reads dir's state beneath the root, following no link; false
// when dir is no directory any more.
func (c *Cache) dirState(dir string) (dirState, bool) {
	if !c.isDir(dir) {
		return nil, false
	}
	s := dirState{}
	_ = c.walk(dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		if err != nil {
			s[rel] = nil // unreadable now: differs from any reading that could read it
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			s[rel] = nil
			return nil
		}
		s[rel] = fi
		return nil
	})
	return s, true
}

// equal reports whether s and t name the same files (same device and
// inode, type and mode, size and modification time).
func (s dirState) equal(t dirState) bool {
	if s == nil || t == nil || len(s) != len(t) {
		return false
	}
	for name, a := range s {
		b, ok := t[name]
		if !ok || a == nil || b == nil {
			return false
		}
		if !os.SameFile(a, b) || a.Mode() != b.Mode() || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) {
			return false
		}
	}
	return true
}

// verifyEntry checks the package k at dir, which objgc added, against its
// record: beneath the root, no link followed, no file but a regular one
// opened (without waiting on a FIFO).
func (c *Cache) verifyEntry(ctx context.Context, k entryKey, dir string, h hash.Hash) []Problem {
	id := k.id
	data, err := c.readFile(c.recordPath(id), maxRecordSize)
	if err != nil {
		return []Problem{{Path: c.recordPath(id), Problem: "digests record unreadable: " + err.Error()}}
	}
	var rec digestRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return []Problem{{Path: c.recordPath(id), Problem: "digests unreadable: " + err.Error()}}
	}
	if !rec.matches(k.fullName, k.version, k.id) {
		return []Problem{{Path: c.recordPath(id), Problem: fmt.Sprintf("digests record describes %s %s (%s), not this package: not used", rec.FullName, rec.Version, rec.ID)}}
	}
	var out []Problem
	seen := map[string]bool{}
	_ = c.walk(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			out = append(out, Problem{Path: p, Problem: err.Error()})
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := filepath.ToSlash(rel)
		switch {
		case d.IsDir():
		case d.Type()&fs.ModeSymlink != 0:
			seen[name] = true
			want, ok := rec.Links[name]
			got := ""
			if r, err := c.rel(p); err == nil {
				got, _ = c.fsys.Readlink(r)
			}
			if !ok {
				out = append(out, Problem{Path: p, Problem: "link not in the package"})
			} else if filepath.ToSlash(got) != want {
				out = append(out, Problem{Path: p, Problem: fmt.Sprintf("link points to %q, recorded %q", got, want)})
			}
		case d.Type().IsRegular():
			seen[name] = true
			want, ok := rec.Files[name]
			if !ok {
				out = append(out, Problem{Path: p, Problem: "file not in the package"})
				return nil
			}
			got, _, err := c.hashFile(p, h)
			if err != nil {
				out = append(out, Problem{Path: p, Problem: err.Error()})
			} else if got != want {
				out = append(out, Problem{Path: p, Problem: "sha256 differs from the one recorded at unpack time"})
			}
		default:
			out = append(out, Problem{Path: p, Problem: "special file"})
		}
		return nil
	})
	var missing []string
	for name := range rec.Files {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	for name := range rec.Links {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		out = append(out, Problem{Path: filepath.Join(dir, filepath.FromSlash(name)), Problem: "missing"})
	}
	return out
}
