package pkgcache

import (
	"fmt"
	"path"
	"strings"
)

// maxLinkHops is how many links one resolution may follow before it is
// given up as undecidable: Linux's MAXSYMLINKS (40), after which
// path resolution fails with ELOOP (path_resolution(7)).
const maxLinkHops = 40

// tree is what an archive will unpack to, by '/'-separated name: regular
// files, directories (given or implied by a deeper name) and links with
// their targets. checkLinks resolves links against it, before anything is
// written.
type tree struct {
	files map[string]bool
	dirs  map[string]bool
	links map[string]string
}

func newTree() *tree {
	return &tree{files: map[string]bool{}, dirs: map[string]bool{}, links: map[string]string{}}
}

// addParents records every parent of name as a directory.
func (t *tree) addParents(name string) {
	for d := path.Dir(name); d != "." && !t.dirs[d]; d = path.Dir(d) {
		t.dirs[d] = true
	}
}

// checkLinks rejects a package whose links could lead outside it. Each
// link is resolved as path_resolution(7) describes, one component at a
// time from the link's directory, following every link met on the way
// (the target of a link is read relative to the directory holding that
// link): a ".." at the package root leaves the package, and so does an
// absolute target. A name under a link (a/x where a is a link) is
// rejected, since unpacking would write through the link. Resolution ends
// inside the package at a missing name or below a regular file (the link
// dangles, and since an installed package never changes it always will),
// or at an existing entry. More than maxLinkHops links in one resolution
// cannot be decided (ELOOP) and is rejected.
func (t *tree) checkLinks() error {
	for name := range t.links {
		if p := t.underLink(name); p != "" {
			return fmt.Errorf("entry %q lies under the link %q", name, p)
		}
	}
	for name := range t.files {
		if p := t.underLink(name); p != "" {
			return fmt.Errorf("entry %q lies under the link %q", name, p)
		}
	}
	for name := range t.dirs {
		if _, isLink := t.links[name]; isLink {
			return fmt.Errorf("entry %q is both a link and a directory", name)
		}
	}
	for name, target := range t.links {
		if err := t.resolve(path.Dir(name), target); err != nil {
			return fmt.Errorf("link %q points to %q, %w", name, target, err)
		}
	}
	return nil
}

// underLink returns the nearest proper parent of name that is a link, or "".
func (t *tree) underLink(name string) string {
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		if _, ok := t.links[d]; ok {
			return d
		}
	}
	return ""
}

// resolve follows target from the directory dir ("." is the package root).
func (t *tree) resolve(dir, target string) error {
	if strings.HasPrefix(target, "/") {
		return fmt.Errorf("outside the package")
	}
	var cur []string // components of the current directory below the root
	if dir != "." {
		cur = strings.Split(dir, "/")
	}
	rest := strings.Split(target, "/")
	hops := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return fmt.Errorf("which leads outside the package")
			}
			cur = cur[:len(cur)-1]
			continue
		}
		p := strings.Join(append(cur[:len(cur):len(cur)], c), "/")
		if lt, ok := t.links[p]; ok {
			hops++
			if hops > maxLinkHops {
				return fmt.Errorf("which cannot be resolved: more than %d links in a row", maxLinkHops)
			}
			if strings.HasPrefix(lt, "/") {
				return fmt.Errorf("which leads outside the package through %q", p)
			}
			// The link's target replaces it, read from the link's own
			// directory, which is cur.
			rest = append(strings.Split(lt, "/"), rest...)
			continue
		}
		switch {
		case t.dirs[p]:
			cur = append(cur, c)
		case t.files[p]:
			return nil // the end, or ENOTDIR: dangling inside the package
		default:
			return nil // ENOENT inside the package: dangling for good
		}
	}
	return nil
}
