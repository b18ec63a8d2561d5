package planfile

import (
	"fmt"
	"path/filepath"
	"sync"
)

// A saved plan travels with its workspace (docs/plan-format.md, "Paths"):
// every path of it that lies under the plan file's directory (inputs,
// hooks dirs, the package cache, hooks) is written relative to that
// directory, and read back against the directory the plan file is in
// when it is read. Paths elsewhere (a system hooks dir, the engine's
// cache) stay absolute. The content pins (each input's and hook's
// sha256, each package's id) are kept: only the location is relaxed.

// relativeTo returns path (absolute) relative to dir (absolute, cleaned)
// when it lies under it, else path.
func relativeTo(dir, path string) string {
	if dir == "" || !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil || !filepath.IsLocal(rel) {
		return path
	}
	return rel
}

// pathMapper maps the paths a saved plan writes (relativeTo its base),
// keeping each object's hooks list once a type: objects of one type share
// one hooks slice, and a plan of a million objects must not copy it a
// million times.
type pathMapper struct {
	base  string
	hooks sync.Map // *Hook (first of a list) -> []Hook
}

func (m *pathMapper) path(p string) string {
	if m == nil {
		return p
	}
	return relativeTo(m.base, p)
}

func (m *pathMapper) paths(ps []string) []string {
	if m == nil || ps == nil {
		return ps
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = m.path(p)
	}
	return out
}

func (m *pathMapper) hook(h *Hook) *Hook {
	if m == nil || h == nil {
		return h
	}
	c := *h
	c.Path = m.path(h.Path)
	return &c
}

func (m *pathMapper) hookList(hs []Hook) []Hook {
	if m == nil || len(hs) == 0 {
		return hs
	}
	if v, ok := m.hooks.Load(&hs[0]); ok {
		return v.([]Hook)
	}
	out := make([]Hook, len(hs))
	for i := range hs {
		out[i] = *m.hook(&hs[i])
	}
	m.hooks.Store(&hs[0], out)
	return out
}

func (m *pathMapper) inputs(in []Input) []Input {
	if m == nil || in == nil {
		return in
	}
	out := make([]Input, len(in))
	for i, x := range in {
		x.Path = m.path(x.Path)
		out[i] = x
	}
	return out
}

// resolve makes every relative path of sp absolute against dir, the
// directory the plan file is in now (absolute). A relative path that
// leaves dir ("../x", as no plan objgc wrote has) is an error naming
// the plan file name.
func (sp *File) resolve(name, dir string) error {
	var bad string
	res := func(p string) string {
		if p == "" || filepath.IsAbs(p) || p == stdinPath {
			return p
		}
		if !filepath.IsLocal(p) {
			if bad == "" {
				bad = p
			}
			return p
		}
		return filepath.Join(dir, p)
	}
	for i := range sp.Inputs {
		sp.Inputs[i].Path = res(sp.Inputs[i].Path)
	}
	for i := range sp.HooksDirs {
		sp.HooksDirs[i] = res(sp.HooksDirs[i])
	}
	sp.CacheDir = res(sp.CacheDir)
	for g := range sp.Groups {
		for o := range sp.Groups[g].Objects {
			hs := sp.Groups[g].Objects[o].Hooks
			for k := range hs {
				hs[k].Path = res(hs[k].Path)
			}
		}
	}
	for i := range sp.Notifications {
		n := &sp.Notifications[i]
		if n.Hook != nil {
			n.Hook.Path = res(n.Hook.Path)
		}
		for k := range n.OldPlaces {
			n.OldPlaces[k] = res(n.OldPlaces[k])
		}
	}
	if bad != "" {
		return fmt.Errorf("%s: path %q leaves the plan's directory: a saved plan names what lies under its directory relative to it and everything else by absolute path; plan again", name, bad)
	}
	return nil
}

// stdinPath is how a plan names standard input; --out refuses it.
const stdinPath = "<stdin>"
