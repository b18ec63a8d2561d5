package destroy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/pkgcache"
)

// PackageWarnings returns one WarnPackageMissing warning per package that
// the types of p's doomed objects name (`name/version@package`) and that
// f's package cache does not hold, in the document order of the first
// object naming each; nil when f uses no cache (f.Packages nil). Without
// the package, an object's class hierarchy is its class alone (hooks of
// ancestor classes are not found) and the package's own hooks do not
// run: only the hooks dirs serve. Each warning counts the doomed objects
// and the types naming the package and names the first object (ID,
// Path). It looks the types up through f (HookFinder.Hierarchy, memoized
// per type).
//
// A type whose hierarchy the cache could not give whole (its package is
// cached, an ancestor class is not, say: HookFinder.Hierarchy's Err) gets
// one WarnHierarchyIncomplete warning per distinct error, counted the same
// way: its class is taken alone, as for a missing package, and that must
// not pass in silence either.
func PackageWarnings(ctx context.Context, p *order.Plan, f *HookFinder) []order.Warning {
	if f == nil || f.Packages == nil {
		return nil
	}
	type missing struct {
		first   int // index into p.Objects
		objects int
		types   map[string]bool
	}
	var pkgOrder, errOrder, ignOrder []string
	byPkg, byErr, byIgn := map[string]*missing{}, map[string]*missing{}, map[string]*missing{}
	ignPkg := map[string]*pkgcache.Package{}
	ignHooks := map[string]map[string]bool{} // package dir -> hooks/<C>/ folders
	count := func(by map[string]*missing, keys *[]string, key string, i int, typ string) {
		m := by[key]
		if m == nil {
			m = &missing{first: i, types: map[string]bool{}}
			by[key] = m
			*keys = append(*keys, key)
		}
		m.objects++
		m.types[typ] = true
	}
	snap := p.Diff.Snapshot
	for i := range p.Objects {
		if ctx.Err() != nil {
			return nil
		}
		si := p.Objects[i].Snapshot
		c := f.Hierarchy(ctx, snap.Type(si))
		switch {
		case c.Missing != "":
			count(byPkg, &pkgOrder, c.Missing, i, snap.TypeString(si))
		case c.Err != nil:
			count(byErr, &errOrder, c.Err.Error(), i, snap.TypeString(si))
		}
		for _, class := range c.Names {
			pkg := c.Ignored[class]
			if pkg == nil || !hasHookFolder(pkg.Dir, class) {
				continue
			}
			if ignHooks[pkg.Dir] == nil {
				ignHooks[pkg.Dir] = map[string]bool{}
			}
			ignHooks[pkg.Dir]["hooks/"+class+"/"] = true
			ignPkg[pkg.Dir] = pkg
			count(byIgn, &ignOrder, pkg.Dir, i, snap.TypeString(si))
		}
	}
	// typesOf lists m's types, sorted, at most five named.
	typesOf := func(m *missing) string {
		types := make([]string, 0, len(m.types))
		for t := range m.types {
			types = append(types, t)
		}
		sort.Strings(types)
		if len(types) > 5 {
			types = append(types[:5], fmt.Sprintf("and %d more", len(m.types)-5))
		}
		return strings.Join(types, ", ")
	}
	var out []order.Warning
	for _, pkg := range pkgOrder {
		m := byPkg[pkg]
		out = append(out, order.Warning{Code: order.WarnPackageMissing, ID: p.ID(m.first), Path: p.Path(m.first), Message: fmt.Sprintf(
			"package %s is not in the package cache: %d doomed %s of %d %s (%s) %s it; their class hierarchy is the class alone (no destroy hook of an ancestor class is found) and the package's hooks do not run; objgc cache add the package to use them",
			pkg, m.objects, plural(m.objects, "object", "objects"), len(m.types), plural(len(m.types), "type", "types"), typesOf(m), plural(m.objects, "names", "name"))})
	}
	for _, dir := range ignOrder {
		m, pkg := byIgn[dir], ignPkg[dir]
		folders := make([]string, 0, len(ignHooks[dir]))
		for h := range ignHooks[dir] {
			folders = append(folders, h)
		}
		sort.Strings(folders)
		out = append(out, order.Warning{Code: order.WarnHooksIgnored, ID: p.ID(m.first), Path: p.Path(m.first), Message: fmt.Sprintf(
			"package %s %s (id %s) was unpacked by murano-engine: the hooks it ships (%s) do not run for %d doomed %s of %d %s (%s), because the engine's packages come from the catalog, which tenants upload to, and Murano runs package scripts in the tenant's VMs, never on the engine host; objgc runs hooks only from hooks dirs and from packages the operator added (objgc cache add the package's archive to run them)",
			pkg.FullName, pkg.Version, pkg.ID, strings.Join(folders, ", "), m.objects, plural(m.objects, "object", "objects"), len(m.types), plural(len(m.types), "type", "types"), typesOf(m))})
	}
	for _, msg := range errOrder {
		m := byErr[msg]
		out = append(out, order.Warning{Code: order.WarnHierarchyIncomplete, ID: p.ID(m.first), Path: p.Path(m.first), Message: fmt.Sprintf(
			"the package cache could not give the class hierarchy of %d doomed %s of %d %s (%s): %s; their class hierarchy is the class alone (no destroy hook of an ancestor class is found); objgc cache add the packages that define the ancestor classes",
			m.objects, plural(m.objects, "object", "objects"), len(m.types), plural(len(m.types), "type", "types"), typesOf(m), msg)})
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// hasHookFolder reports whether the package at dir has a hooks/<class>/
// folder (not following a link at that name).
func hasHookFolder(dir, class string) bool {
	st, err := os.Lstat(filepath.Join(dir, "hooks", class))
	return err == nil && st.IsDir()
}
