package pkgcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/objgc/objgc/internal/atomicfile"

	yaml "go.yaml.in/yaml/v3"
)

// objectClass is the root of every Murano class hierarchy: a class whose
// file has no Extends extends it (Murano's rule), except itself.
const objectClass = "io.murano.Object"

// Manifest is a package's manifest.yaml, as Murano ships it (package
// format 1.x). Keys objgc does not read are ignored.
type manifest struct {
	Format   string            `yaml:"Format" json:"format,omitempty"`
	Type     string            `yaml:"Type" json:"type,omitempty"`       // Application or Library
	FullName string            `yaml:"FullName" json:"full_name"`        // e.g. io.murano
	Name     string            `yaml:"Name" json:"name,omitempty"`       // display name
	Version  string            `yaml:"Version" json:"version"`           // defaultVersion when absent
	Classes  map[string]string `yaml:"Classes" json:"classes,omitempty"` // full class name -> file under Classes/
	Require  map[string]string `yaml:"Require" json:"require,omitempty"` // FullName -> version spec ("" = any)
}

// parseManifest decodes manifest.yaml bytes and checks what the cache relies
// on: FullName present and one Murano accepts (validFullName: Unicode
// letters and numbers, '_' and '.', no dot first or last, no ".."),
// Version a safe path component
// (defaultVersion when absent), and every class file a relative path under
// Classes/. Errors say what is wrong, without the file name (callers add
// it).
func parseManifest(data []byte) (*manifest, error) {
	var m manifest
	if err := decodeYAML(data, &m); err != nil {
		return nil, fmt.Errorf("manifest.yaml is not valid YAML: %w", err)
	}
	if m.FullName == "" {
		return nil, errors.New("manifest.yaml has no FullName")
	}
	if !validFullName(m.FullName) {
		return nil, fmt.Errorf("manifest.yaml: FullName %q is not a safe path component", m.FullName)
	}
	if m.Version == "" {
		m.Version = defaultVersion
	}
	if !safeComponent(m.Version, versionRE) {
		return nil, fmt.Errorf("manifest.yaml: Version %q is not a safe path component", m.Version)
	}
	for class, file := range m.Classes {
		if class == "" || file == "" || !filepath.IsLocal(filepath.FromSlash(file)) || strings.Contains(file, `\`) {
			return nil, fmt.Errorf("manifest.yaml: class %q has file %q outside Classes/", class, file)
		}
	}
	return &m, nil
}

// Class is one class defined by a package, read from its class file.
type classDef struct {
	Name    string   // full name, e.g. io.murano.resources.LinuxMuranoInstance
	Extends []string // full names of the direct parents, in file order; [objectClass] when the file has no Extends
	File    string   // the class file, relative to the package's Classes/ directory
	// Err is set when the class file cannot be resolved (an Extends name
	// with an unknown prefix): Murano fails only when it loads that class,
	// so the rest of the package stays usable; Hierarchy returns Err.
	Err error
}

// Package is an unpacked package: its manifest and its classes.
type Package struct {
	FullName string
	Version  string
	ID       string // the package's id in the cache; "" for a directory read with loadPackage
	Dir      string // absolute path of the unpacked package
	manifest *manifest
	classes  map[string]*classDef // by full name
	// InstalledBy is installedByObjgc or installedByEngine for a package
	// a Session returned; "" for a directory read with loadPackage.
	InstalledBy string
	// RunsHooks says whether the hooks shipped in the package (its
	// hooks/ folder) may run: only for a package objgc added (the
	// operator chose it). A package the engine unpacked came from the
	// catalog, which tenants upload to; its hooks never run.
	RunsHooks bool
	// digests are the sha256 of the package's files recorded when objgc
	// added it, by '/'-separated name (RecordedSHA256).
	digests map[string]string
}

// RecordedSHA256 returns the sha256 (lower-case hex) recorded for the
// file at path when objgc added the package (cache add), false when path
// is not a file of a package objgc added. A hook from the package must
// still have it when it runs.
func (p *Package) RecordedSHA256(path string) (string, bool) {
	rel, err := filepath.Rel(p.Dir, path)
	if err != nil || p.digests == nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	sum, ok := p.digests[filepath.ToSlash(rel)]
	return sum, ok
}

// loadPackage reads dir/manifest.yaml and every class file it lists
// (dir/Classes/<file>). A class file may hold several YAML documents, one
// class each; each document's Name and Extends are resolved through its
// Namespaces exactly as Murano's NamespaceResolver does (see resolveName).
// A manifest class whose file has no matching document is an error, and
// so is a class file that is not YAML; an Extends name with an unknown
// prefix only marks that class (Class.Err).
//
// Everything is read as data, within limits, because a package the engine
// unpacked came from the catalog, which tenants upload to: manifest.yaml
// at most maxManifestSize bytes, a class file at most maxClassFileSize,
// each YAML document at most maxYAMLNodes nodes with its aliases expanded
// (see decodeYAML). Reading does not change the files' access times where
// the system allows it (see accessTime).
func loadPackage(dir string) (*Package, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("loading package %s: %w", dir, err)
	}
	defer r.Close()
	return loadPackageIn(r, dir)
}

// loadPackageIn is loadPackage reading through r, a handle on the package
// directory dir: no name in the package leads out of it, and only regular
// files are read, opened without waiting for a FIFO's peer (readIn).
func loadPackageIn(r *os.Root, dir string) (*Package, error) {
	data, err := readIn(r, dir, "manifest.yaml", maxManifestSize)
	if err != nil {
		return nil, fmt.Errorf("loading package %s: %w", dir, err)
	}
	m, err := parseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("loading package %s: %w", dir, err)
	}
	p := &Package{FullName: m.FullName, Version: m.Version, Dir: dir, manifest: m, classes: map[string]*classDef{}}
	names := make([]string, 0, len(m.Classes))
	for n := range m.Classes {
		names = append(names, n)
	}
	sort.Strings(names)
	docsByFile := map[string][]classDoc{}
	for _, name := range names {
		file := m.Classes[name]
		docs, ok := docsByFile[file]
		if !ok {
			docs, err = readClassFile(r, dir, path.Join("Classes", file))
			if err != nil {
				return nil, fmt.Errorf("loading package %s: class %s: %w", m.FullName, name, err)
			}
			docsByFile[file] = docs
		}
		cl, err := classFromDocs(name, file, docs)
		if err != nil {
			return nil, fmt.Errorf("loading package %s: %w", m.FullName, err)
		}
		p.classes[name] = cl
	}
	return p, nil
}

// classDoc is one YAML document of a class file.
type classDoc struct {
	Name       string            `yaml:"Name"`
	Namespaces map[string]string `yaml:"Namespaces"`
	Extends    any               `yaml:"Extends"`
}

func readClassFile(r *os.Root, dir, name string) ([]classDoc, error) {
	p := filepath.Join(dir, filepath.FromSlash(name))
	data, err := readIn(r, dir, filepath.FromSlash(name), maxClassFileSize)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []classDoc
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		var d classDoc
		if err == nil {
			err = decodeNode(&n, &d)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", p, len(docs)+1, err)
		}
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no class document", p)
	}
	return docs, nil
}

// classFromDocs picks the document defining class name: the one whose
// Name resolves to name, else the one whose Name is name's last
// component, else the only document of the file.
func classFromDocs(name, file string, docs []classDoc) (*classDef, error) {
	short := name[strings.LastIndex(name, ".")+1:]
	pick := -1
	for i, d := range docs {
		if full, err := resolveName(d.Name, d.Namespaces); err == nil && full == name {
			pick = i
			break
		}
	}
	if pick < 0 {
		for i, d := range docs {
			if d.Name == short {
				pick = i
				break
			}
		}
	}
	if pick < 0 && len(docs) == 1 {
		pick = 0
	}
	if pick < 0 {
		return nil, fmt.Errorf("class %s: no document named %s in Classes/%s", name, short, file)
	}
	d := docs[pick]
	var raw []string
	switch e := d.Extends.(type) {
	case nil:
	case string:
		raw = []string{e}
	case []any:
		for _, x := range e {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("class %s: Classes/%s: Extends item %v is not a class name", name, file, x)
			}
			raw = append(raw, s)
		}
	default:
		return nil, fmt.Errorf("class %s: Classes/%s: Extends must be a class name or a list of them", name, file)
	}
	cl := &classDef{Name: name, File: file}
	for _, r := range raw {
		full, err := resolveName(r, d.Namespaces)
		if err != nil {
			cl.Err = fmt.Errorf("class %s: Classes/%s: Extends: %w", name, file, err)
			cl.Extends = nil
			return cl, nil
		}
		cl.Extends = append(cl.Extends, full)
	}
	if len(raw) == 0 && name != objectClass {
		cl.Extends = []string{objectClass}
	}
	return cl, nil
}

// resolveName turns a class name as written in a class file into a full
// name, as Murano's NamespaceResolver does: ":Name" is the global Name;
// "prefix:Name" is namespaces[prefix] + "." + Name (an unknown prefix is
// an error); a name with no dot is in the "=" namespace when there is one;
// any other name (one containing a dot) is already full.
func resolveName(name string, namespaces map[string]string) (string, error) {
	if name == "" {
		return "", errors.New("empty class name")
	}
	if strings.HasPrefix(name, ":") {
		return name[1:], nil
	}
	if prefix, short, ok := strings.Cut(name, ":"); ok {
		if short == "" || strings.Contains(short, ":") {
			return "", fmt.Errorf("class name %q is not prefix:Name", name)
		}
		ns, ok := namespaces[prefix]
		if !ok && prefix != "" {
			return "", fmt.Errorf("class name %q: unknown namespace prefix %q", name, prefix)
		}
		if ns == "" {
			return short, nil
		}
		return ns + "." + short, nil
	}
	if def, ok := namespaces["="]; ok && !strings.Contains(name, ".") {
		return def + "." + name, nil
	}
	return name, nil
}

// Hierarchy returns class and its ancestors in breadth-first order over
// Extends, each class once (docs/design.md, "Hooks"). lookup finds the
// definition of a class (in any package); a class it cannot find is listed
// but its parents are unknown. The first element is always class.
func hierarchy(class string, lookup func(name string) (*classDef, error)) ([]string, error) {
	var out []string
	seen := map[string]bool{class: true}
	queue := []string{class}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		out = append(out, name)
		cl, err := lookup(name)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return out, err
		}
		if cl.Err != nil {
			return out, cl.Err
		}
		for _, parent := range cl.Extends {
			if !seen[parent] {
				seen[parent] = true
				queue = append(queue, parent)
			}
		}
	}
	return out, nil
}

// defines reports whether the manifest lists class.
func (m *manifest) defines(class string) bool {
	_, ok := m.Classes[class]
	return ok
}

// cleanZipName checks an archive entry name: relative, '/'-separated, no
// "..". It returns the cleaned name.
func cleanZipName(name string) (string, error) {
	if strings.Contains(name, `\`) || strings.HasPrefix(name, "/") || strings.Contains(name, "\x00") {
		return "", fmt.Errorf("entry %q has an absolute or non-portable name", name)
	}
	trimmed := strings.TrimSuffix(name, "/")
	for _, part := range strings.Split(trimmed, "/") {
		if part == ".." {
			return "", fmt.Errorf("entry %q leaves the package (..)", name)
		}
	}
	c := path.Clean(trimmed)
	if c == "." || !filepath.IsLocal(filepath.FromSlash(c)) {
		return "", fmt.Errorf("entry %q is not a relative path inside the package", name)
	}
	return c, nil
}

// Limits on what objgc reads from a package (loadPackage): Murano's API
// refuses packages over 5 MB by default, so no real manifest or class file
// comes near them.
const (
	maxManifestSize  = 1 << 20
	maxClassFileSize = 8 << 20
	// maxYAMLNodes bounds one YAML document's nodes, counting the nodes
	// an alias stands for each time it is used: a few kilobytes of
	// nested aliases can otherwise expand to billions ("billion laughs").
	maxYAMLNodes = 1 << 20
)

// decodeYAML decodes the single YAML document in data into v, refusing a
// document whose expansion exceeds maxYAMLNodes nodes.
func decodeYAML(data []byte, v any) error {
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		return err
	}
	if n.Kind == 0 { // empty document
		return nil
	}
	return decodeNode(&n, v)
}

// decodeNode decodes n into v once its size, aliases expanded, is known
// to be within maxYAMLNodes.
func decodeNode(n *yaml.Node, v any) error {
	memo := map[*yaml.Node]int{}
	if _, err := expandedSize(n, memo, 0); err != nil {
		return err
	}
	return n.Decode(v)
}

// expandedSize counts the nodes of n with every alias replaced by what
// it names, stopping as soon as the count passes maxYAMLNodes or the
// nesting passes 10,000 levels.
func expandedSize(n *yaml.Node, memo map[*yaml.Node]int, depth int) (int, error) {
	if depth > 10000 {
		return 0, errors.New("YAML nested deeper than 10000 levels")
	}
	if k, ok := memo[n]; ok {
		if k < 0 {
			return 0, errors.New("YAML alias refers to itself")
		}
		return k, nil
	}
	memo[n] = -1
	size := 1
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		k, err := expandedSize(n.Alias, memo, depth+1)
		if err != nil {
			return 0, err
		}
		size += k
	}
	for _, c := range n.Content {
		k, err := expandedSize(c, memo, depth+1)
		if err != nil {
			return 0, err
		}
		size += k
		if size > maxYAMLNodes {
			return 0, fmt.Errorf("YAML document expands to more than %d nodes (aliases counted each time they are used)", maxYAMLNodes)
		}
	}
	if size > maxYAMLNodes {
		return 0, fmt.Errorf("YAML document expands to more than %d nodes (aliases counted each time they are used)", maxYAMLNodes)
	}
	memo[n] = size
	return size, nil
}

// readManifest reads and parses dir/manifest.yaml.
func readManifest(dir string) (*manifest, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readManifestIn(r, dir)
}

func readManifestIn(r *os.Root, dir string) (*manifest, error) {
	data, err := readIn(r, dir, "manifest.yaml", maxManifestSize)
	if err != nil {
		return nil, err
	}
	return parseManifest(data)
}

// readIn reads the file name beneath r (a package directory, dir in
// messages), at most limit bytes. A link inside the package is followed
// as Murano's loader follows it, but never out of the package (r); the
// file is opened without waiting for a FIFO's peer and without moving its
// access time where the kernel allows (see accessTime), and must be a
// regular file: anything else is an error naming the path, never a wait.
func readIn(r *os.Root, dir, name string, limit int64) ([]byte, error) {
	path := filepath.Join(dir, name)
	f, err := r.OpenFile(name, os.O_RDONLY|nonblockFlag|noatimeFlag, 0)
	if err != nil && noatimeFlag != 0 && errors.Is(err, fs.ErrPermission) {
		f, err = r.OpenFile(name, os.O_RDONLY|nonblockFlag, 0)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.Unwrap(err)}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is a %s, not a regular file", path, atomicfile.Kind(st.Mode()))
	}
	if err := clearNonblock(f); err != nil {
		return nil, err
	}
	return readAllLimited(f, path, limit)
}

// loadEntry loads the package at dir, a package directory beneath the
// cache root (not a link), through a handle on it.
func (c *Cache) loadEntry(ctx context.Context, dir string) (*Package, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := c.subRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("loading package %s: %w", dir, err)
	}
	defer r.Close()
	return loadPackageIn(r, dir)
}

// readEntryManifest reads the manifest of the package directory dir
// beneath the cache root (see loadEntry).
func (c *Cache) readEntryManifest(dir string) (*manifest, error) {
	r, err := c.subRoot(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readManifestIn(r, dir)
}
