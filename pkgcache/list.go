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

// Entry is one cached package: packages/<FullName>/<Version>@<ID>/.
type Entry struct {
	FullName  string    `json:"full_name"`
	Version   string    `json:"version"`
	ID        string    `json:"id"`
	Dir       string    `json:"dir"`
	Size      int64     `json:"size"`      // bytes of the unpacked files
	Installed time.Time `json:"installed"` // when it was renamed into place
	LastUse   time.Time `json:"last_use"`  // mtime of locks/<id>.lastuse (hourly resolution); zero if never used
	InUse     bool      `json:"in_use"`    // some process holds its usage lock

	// partial: only the names were read (Size, Installed and LastUse are
	// zero); see list.
	partial bool
}

// lastUseOrInstalled is the time the LRU and unused-for policies compare.
func (e Entry) lastUseOrInstalled() time.Time {
	if e.LastUse.After(e.Installed) {
		return e.LastUse
	}
	return e.Installed
}

// entry reads what List reports about one package directory.
func (c *Cache) entry(fullName, version, id string) (Entry, error) {
	return c.entryInfo(fullName, version, id, true)
}

func (c *Cache) entryInfo(fullName, version, id string, withInUse bool) (Entry, error) {
	dir := c.entryDir(fullName, version, id)
	e := Entry{FullName: fullName, Version: version, ID: id, Dir: dir}
	rec, err := readDigestsHeader(dir)
	if err != nil {
		// No record (a directory copied in by hand): measure it.
		st, serr := os.Stat(dir)
		if serr != nil {
			return e, serr
		}
		e.Installed = st.ModTime()
		e.Size = dirSize(dir)
	} else {
		e.Size, e.Installed = rec.Size, rec.Installed
	}
	e.LastUse = c.lastUse(id)
	if withInUse {
		e.InUse = c.inUse(id)
	}
	return e, nil
}

// readDigestsHeader reads the digests file without its file list.
func readDigestsHeader(dir string) (*digestRecord, error) {
	// The header fields come first, then the file list: the first 4 KiB
	// hold the header unless it is unusually long.
	const headSize = 4096
	path := filepath.Join(dir, digestsFile)
	data, err := readHead(path, headSize)
	if err != nil {
		return nil, err
	}
	files := []byte(`"files"`)
	i := bytes.Index(data, files)
	if i < 0 && len(data) == headSize {
		if data, err = os.ReadFile(path); err != nil {
			return nil, err
		}
		i = bytes.Index(data, files)
	}
	var rec struct {
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
	return &digestRecord{Installed: rec.Installed, Size: rec.Size}, nil
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
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

// scan lists packages/<FullName>/<version>@<id> names without reading
// them. The error wraps ErrOldLayout when a FullName holds a directory of
// the old layout.
func (c *Cache) scan() ([]entryKey, error) {
	names, err := readDirNames(c.packagesDir())
	if err != nil {
		return nil, fmt.Errorf("listing package cache: %w", err)
	}
	var keys []entryKey
	for _, fn := range names {
		k, err := c.scanFullName(fn, nil)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k...)
	}
	return keys, nil
}

// scanFullName lists the packages of packages/<fn>/, sorted by version
// (as strings) and id, so that the ids of one version are next to each
// other; a directory that vanishes meanwhile (a prune) lists nothing.
// A version directory of the old layout is an *OldLayoutError.
//
// The trash directories of removals (see trashName) are appended to trash
// when it is not nil.
func (c *Cache) scanFullName(fn string, trash *[]string) ([]entryKey, error) {
	var keys []entryKey
	names, err := readDirNames(c.fullNameDir(fn))
	if err != nil {
		return nil, nil
	}
	for _, name := range names {
		if v, id, ok := parseEntryName(name); ok {
			keys = append(keys, entryKey{fn, v, id})
			continue
		}
		switch {
		case strings.HasPrefix(name, trashPrefix):
			if trash != nil {
				*trash = append(*trash, filepath.Join(c.fullNameDir(fn), name))
			}
		case c.oldVersionDir(fn, name):
			return nil, c.oldLayout(fn, name)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].version != keys[j].version {
			return keys[i].version < keys[j].version
		}
		return keys[i].id < keys[j].id
	})
	return keys, nil
}

// List returns every cached package, sorted by FullName, then version
// (semantic order, oldest first), then install time and id. A package
// removed while List runs is left out. List takes no lock that others
// wait for: InUse is tested with a non-blocking exclusive flock.
func (c *Cache) List(ctx context.Context) ([]Entry, error) {
	entries, _, err := c.list(ctx, true, false)
	return entries, err
}

// list is List. With partial, a package that is the only id of its
// version is listed by name alone (Entry.partial), its record and last-use
// marker not read: prune --outdated needs them only for the packages it
// removes, and reads them then.
//
// It also returns the trash directories it saw (see trashName).
func (c *Cache) list(ctx context.Context, withInUse, partial bool) ([]Entry, []string, error) {
	names, err := readDirNames(c.packagesDir())
	if err != nil {
		return nil, nil, fmt.Errorf("listing package cache: %w", err)
	}
	// Workers take one FullName at a time: its versions, their ids, and
	// each package's record, marker and lock. All of it is system calls
	// on small files and directories, so the workers outnumber the CPUs.
	workers := min(4*runtime.GOMAXPROCS(0), max(len(names), 1))
	found := make([][]Entry, workers)
	trash := make([][]string, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	next := make(chan string)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for fn := range next {
				keys, err := c.scanFullName(fn, &trash[w])
				if err != nil {
					if errs[w] == nil {
						errs[w] = err
					}
					continue
				}
				for i, k := range keys {
					alone := (i == 0 || keys[i-1].version != k.version) && (i == len(keys)-1 || keys[i+1].version != k.version)
					if partial && alone {
						found[w] = append(found[w], Entry{FullName: k.fullName, Version: k.version, ID: k.id, Dir: c.entryDir(k.fullName, k.version, k.id), partial: true})
						continue
					}
					if e, err := c.entryInfo(k.fullName, k.version, k.id, withInUse); err == nil {
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
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	var out []Entry
	for _, f := range found {
		out = append(out, f...)
	}
	var trashDirs []string
	for _, t := range trash {
		trashDirs = append(trashDirs, t...)
	}
	sort.Slice(out, func(i, j int) bool { return entryLess(out[i], out[j]) })
	return out, trashDirs, nil
}

func entryLess(a, b Entry) bool {
	if a.FullName != b.FullName {
		return a.FullName < b.FullName
	}
	if c := CompareVersions(a.Version, b.Version); c != 0 {
		return c < 0
	}
	if !a.Installed.Equal(b.Installed) {
		return a.Installed.Before(b.Installed)
	}
	return a.ID < b.ID
}

// CompareVersions orders two package versions as semantic versions
// (Murano uses semantic_version): numeric dot-separated parts compare as
// numbers, a pre-release ("1.0.0-rc1") sorts before its release, build
// metadata ("+x") is ignored; parts that are not numbers compare as
// strings. It returns -1, 0 or 1.
func CompareVersions(a, b string) int {
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

// newest picks, without locks, the entry Path describes. The error wraps
// ErrOldLayout when packages/<fullName>/ holds a directory of the old
// layout: its packages would be missed.
func (c *Cache) newest(fullName, version string) (Entry, error) {
	if !safeComponent(fullName, fullNameRE) || (version != "" && !safeComponent(version, versionRE)) {
		return Entry{}, fmt.Errorf("package %s %s: %w", fullName, version, ErrNotFound)
	}
	keys, err := c.scanFullName(fullName, nil)
	if err != nil {
		return Entry{}, err
	}
	// Candidates: the ids of version, or of the highest version first.
	sort.SliceStable(keys, func(i, j int) bool { return CompareVersions(keys[i].version, keys[j].version) > 0 })
	var best Entry
	found := false
	for _, k := range keys {
		if version != "" && k.version != version {
			continue
		}
		if found && k.version != best.Version {
			break // the highest version with a readable package wins
		}
		e := Entry{FullName: fullName, Version: k.version, ID: k.id, Dir: c.entryDir(fullName, k.version, k.id)}
		if rec, err := readDigestsHeader(e.Dir); err == nil {
			e.Installed = rec.Installed
		} else if st, err := os.Stat(e.Dir); err == nil {
			e.Installed = st.ModTime()
		} else {
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
}

// VerifyResult is what Verify checked and found.
type VerifyResult struct {
	Checked  int       `json:"checked"` // packages checked
	Problems []Problem `json:"problems"`
}

// Verify checks every package under packages/: it has its digests file,
// and its files and links are exactly those recorded at unpack time, with
// the same sha256. It holds each package's usage lock (shared, without
// marking a use) while it checks it, so no prune removes it meanwhile.
// Stray files in packages/ are problems too. The error is non-nil only
// when the cache cannot be read or ctx ends.
func (c *Cache) Verify(ctx context.Context) (VerifyResult, error) {
	var res VerifyResult
	keys, err := c.scan()
	if err != nil {
		return res, err
	}
	res.Problems = append(res.Problems, c.strays()...)
	h := sha256.New()
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		unlock, err := lockfile.Lock(ctx, c.lockPath(k.id+".usage"), lockfile.Shared)
		if err != nil {
			return res, err
		}
		dir := c.entryDir(k.fullName, k.version, k.id)
		if isDir(dir) {
			res.Checked++
			for _, p := range verifyEntry(dir, h) {
				p.FullName, p.Version, p.ID = k.fullName, k.version, k.id
				res.Problems = append(res.Problems, p)
			}
		}
		unlock()
	}
	return res, nil
}

// strays reports files in packages/ where the layout wants directories,
// and names in a FullName directory that are not <version>@<id>
// directories.
func (c *Cache) strays() []Problem {
	var out []Problem
	root := c.packagesDir()
	fns, _ := os.ReadDir(root)
	for _, fn := range fns {
		p := filepath.Join(root, fn.Name())
		if !fn.IsDir() {
			out = append(out, Problem{Path: p, Problem: "not a directory (expected packages/<FullName>/)"})
			continue
		}
		ents, _ := os.ReadDir(p)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), trashPrefix) {
				continue // being deleted, or left by a killed removal for prune
			}
			if _, _, ok := parseEntryName(e.Name()); !ok || !e.IsDir() {
				out = append(out, Problem{Path: filepath.Join(p, e.Name()), Problem: "not a package directory named <version>@<sha256 id>"})
			}
		}
	}
	return out
}

func verifyEntry(dir string, h hash.Hash) []Problem {
	data, err := os.ReadFile(filepath.Join(dir, digestsFile))
	if err != nil {
		return []Problem{{Path: filepath.Join(dir, digestsFile), Problem: "no digests recorded: " + err.Error()}}
	}
	var rec digestRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return []Problem{{Path: filepath.Join(dir, digestsFile), Problem: "digests unreadable: " + err.Error()}}
	}
	var out []Problem
	seen := map[string]bool{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			out = append(out, Problem{Path: p, Problem: err.Error()})
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		name := filepath.ToSlash(rel)
		switch {
		case d.IsDir() || name == digestsFile:
		case d.Type()&fs.ModeSymlink != 0:
			seen[name] = true
			want, ok := rec.Links[name]
			got, _ := os.Readlink(p)
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
			got, _, err := hashFile(p, h)
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
