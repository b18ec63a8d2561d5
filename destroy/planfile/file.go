// Package planfile is objgc's saved plan (docs/plan-format.md): its
// format (File and the types it holds), its reader (Parse), its one JSON
// encoder (WriteJSON) and View, the read-only view of a plan, fresh or
// saved, that every output format writes from. It knows nothing of how a
// plan is made or applied (package destroy), so that its format is read
// and written in one place.
package planfile

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/internal/jsonedit"
	"github.com/objgc/objgc/snapshot"
)

// FormatVersion is the "format_version" of JSON plans; see
// docs/plan-format.md. Version 2 added what apply checks a saved plan
// against (hooks dirs, the package cache and its packages, each hook's
// sha256, the types hooks are looked up by) and made paths absolute.
//
// Version 3 records what lies under the plan file's directory relative
// to it (paths.go), and apply's no_hooks and require_hooks.
const FormatVersion = "3"

// File is the JSON plan objgc plan prints and saves with --out
// (docs/plan-format.md): what apply PLANFILE runs and checks before it
// runs (destroy.PlanChanges, destroy.Run).
type File struct {
	FormatVersion string          `json:"format_version"`
	Inputs        []Input         `json:"inputs"`
	OnDangling    string          `json:"on_dangling"`
	NoHooks       bool            `json:"no_hooks"`
	RequireHooks  bool            `json:"require_hooks"`
	HooksDirs     []string        `json:"hooks_dirs"`
	CacheDir      string          `json:"cache_dir"`
	Packages      []Package       `json:"packages"`
	Groups        []Group         `json:"groups"`
	Notifications []Notification  `json:"notifications"`
	Cycles        [][]string      `json:"cycles"`
	Dropped       []Dropped       `json:"dropped"`
	Warnings      []order.Warning `json:"warnings"`
	Summary       Summary         `json:"summary"`
}

// Input is part of a File (docs/plan-format.md).
type Input struct {
	Role   string `json:"role"` // model, snapshot or graph
	Path   string `json:"path"` // absolute once read (paths.go); <stdin> for standard input
	SHA256 string `json:"sha256"`
}

// Package is one cached package a plan read.
type Package struct {
	FullName string `json:"full_name"`
	Version  string `json:"version"`
	ID       string `json:"id"`
}

// Type is a type as hooks are looked up by it: the type string's
// parts, completed by the header's legacy classVersion and package.
type Type struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Package string `json:"package,omitempty"`
}

// NewType returns t as a plan records it.
func NewType(t snapshot.Type) Type { return Type{t.Name, t.Version, t.Package} }

// Type returns the type hooks are looked up by.
func (t Type) Type() snapshot.Type {
	return snapshot.Type{Name: t.Name, Version: t.Version, Package: t.Package}
}

// Group is part of a File (docs/plan-format.md).
type Group struct {
	Index   int      `json:"index"`
	Objects []Object `json:"objects"`
}

// Object is one doomed object as a JSON plan lists it (a File,
// docs/plan-format.md): what plan prints, --out saves and apply reads
// back. A doomed object has three forms, each for its own reader:
// order.Doomed, 8 bytes, is what a plan keeps of each (a million doomed
// objects must cost little beside their model); order.Planned is that
// object found again in the snapshot, for apply and the text plan;
// Object adds what the saved plan records (type reference, classes,
// package, hooks with their sha256). apply's report lists an object's
// outcome (state, hook runs), not its place: it shares only id and type
// with Object, and has a type of its own in cmd.
type Object struct {
	ID      string         `json:"id"`
	Type    string         `json:"type"`
	Path    string         `json:"path"`
	Owner   *string        `json:"owner"`
	Reasons []order.Reason `json:"reasons"`
	TypeRef Type           `json:"type_ref"`
	Classes []string       `json:"classes"`
	Package *string        `json:"package"`
	Hooks   []Hook         `json:"hooks"`
}

// Hook is part of a File (docs/plan-format.md).
type Hook struct {
	Event  string `json:"event"`
	Class  string `json:"class"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256,omitempty"`
	Error  string `json:"error,omitempty"`
	// RunAs names the user the hook runs as when not the user running
	// objgc (hook.User): a package's hook, for root on another user's
	// cache. Omitted otherwise.
	RunAs string `json:"run_as,omitempty"`
}

// Notification is part of a File (docs/plan-format.md).
type Notification struct {
	Group             int    `json:"group"`
	Publisher         string `json:"publisher"`
	Subscriber        string `json:"subscriber"`
	SubscriberTypeRef *Type  `json:"subscriber_type_ref"`
	Handler           string `json:"handler"`
	Hook              *Hook  `json:"hook"`
	// OldPlaces: files at the place notify hooks had before
	// <C>/notify/<handler>, which do not run; only when Hook is null.
	OldPlaces []string `json:"old_places,omitempty"`
}

// Dropped is part of a File (docs/plan-format.md).
type Dropped struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Path string `json:"path"`
}

// Summary is part of a File (docs/plan-format.md).
type Summary struct {
	SnapshotObjects    int  `json:"snapshot_objects"`
	IncomingObjects    int  `json:"incoming_objects"`
	Destroy            int  `json:"destroy"`
	Groups             int  `json:"groups"`
	Notifications      int  `json:"notifications"`
	DanglingReferences int  `json:"dangling_references"`
	Dropped            int  `json:"dropped"`
	Warnings           int  `json:"warnings"`
	WithoutDestroyHook int  `json:"without_destroy_hook"`
	ApplyRefuses       bool `json:"apply_refuses"`
	// Refusals are why apply refuses the plan (destroy's Prepared.Refusals), in
	// the order apply reports them; empty when it runs it.
	Refusals []Refusal `json:"refusals"`
}

// modelKey reports whether k is a key that the root of a Murano model has
// (an envelope's or an engine task's, or a bare tree's header) and the
// root of a saved plan never has (docs/plan-format.md).
func modelKey(k string) bool { return k == "?" || snapshot.EnvelopeKey(k) }

// Parse tells from the bytes of the file path whether it holds a
// saved plan: a "format_version" and an "inputs" array at its root. It
// returns the plan, or nil when data is not one (a model). A plan of
// another format version, or one that does not decode, is an error naming
// path. The plan's relative paths are made absolute against the directory
// path is in now (the current directory for "<stdin>"): a saved plan
// travels with its workspace.
func Parse(path string, data []byte) (*File, error) {
	if modelKey(snapshot.FirstKey(data)) {
		// A model: the lookups below would read the whole file to
		// find no "format_version", a pass over a large model.
		return nil, nil
	}
	if !gjson.GetBytes(data, "format_version").Exists() || !gjson.GetBytes(data, "inputs").IsArray() {
		return nil, nil
	}
	if v := gjson.GetBytes(data, "format_version").String(); v != FormatVersion {
		return nil, fmt.Errorf("%s: plan format_version %q; this objgc reads %q: plan again", path, v, FormatVersion)
	}
	var sp File
	if err := json.Unmarshal(data, &sp); err != nil {
		return nil, fmt.Errorf("%s: not a valid objgc plan: %w", path, err)
	}
	// objgc writes each key once; encoding/json kept the last of a key
	// written twice, the lookups above the first: which one the plan
	// means is a guess.
	if at, k, dup := jsonedit.DuplicateKey(data); dup {
		return nil, fmt.Errorf("%s: %s: duplicate key %s: not a plan objgc wrote (it writes each key once); plan again", path, at, strconv.Quote(k))
	}
	dir := "."
	if path != stdinPath {
		dir = filepath.Dir(path)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := sp.resolve(path, dir); err != nil {
		return nil, err
	}
	return &sp, nil
}

// Refusal is one reason apply refuses a plan (docs/plan-format.md,
// summary.refusals): a stable Code, a Message for people (no string of
// the model in it, only counts), and, in a plan just made, Err, the
// error apply returns for it (not saved).
type Refusal struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Err     error  `json:"-"`
}
