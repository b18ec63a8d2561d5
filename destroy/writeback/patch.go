package writeback

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/internal/jsonedit"
	"github.com/objgc/objgc/snapshot"
)

// checkPatch applies a notify hook's merge patch (RFC 7386) to one copy
// of its subscriber the way the write-back does, and returns the patched
// JSON, or the rule of the write-back the patch breaks. apply checks a
// patch with it before the notification is journalled as done, and the
// write-back applies patches with it, so that the two cannot disagree.
//
// subscriber is the JSON of the copy (a valid JSON object, "?" header
// included); depth is the number of JSON arrays and objects that enclose
// it in its document (snapshot.Tree.Depth). The rules (docs/design.md,
// "Hooks" and "Write-back"; docs/hooks.md):
//
//   - the patch is valid JSON and a JSON object: anything else would
//     replace the whole subscriber, header and all;
//   - it never sets the key "?", neither where it merges into an object
//     (the subscriber's header or an owned object's) nor inside a value it
//     sets: a patch changes properties, it does not add objects;
//   - it never removes (null) or replaces a value that holds an object (a
//     JSON object whose "?" is an object): the object would leave both
//     Objects and ObjectsCopy while it still exists in the world. Merging
//     into an owned object's properties is allowed, and so is a string
//     equal to a doomed object's id, which re-references that object;
//   - the patched subscriber, at depth, nests no deeper than the model
//     reader accepts (snapshot.MaxDepth), one level kept spare for the
//     envelope the write-back may wrap around a bare object tree;
//   - every string of the patch, key or value, is UTF-8 (RFC 8259 section
//     8.1), and no key holds a lone UTF-16 surrogate escape (\ud800 alone):
//     it decodes as U+FFFD here and as itself in Python, so the key it
//     merges into would be a guess; a subscriber's key holding one cannot
//     be merged into either;
//   - the members the patch sets, with the subscriber's header, load with
//     the model reader (snapshot.LoadModel), as the write-back reloads
//     them: whatever else the reader refuses is refused here first.
//
// Patches of several notifications to one subscriber apply one after the
// other, each to what the previous returned. The errors are lower case
// and name the JSON path inside the subscriber ("$" is the subscriber).
func checkPatch(subscriber, patch []byte, depth int) ([]byte, error) {
	out, err := applyPatch(subscriber, patch)
	if err != nil {
		return nil, err
	}
	if err := checkNesting(nesting(out), depth); err != nil {
		return nil, err
	}
	if err := loadsBack(out, patch); err != nil {
		return nil, err
	}
	return out, nil
}

// loadsBack reads, with the model reader, the header of the patched
// subscriber out and the members the patch names (the ones the
// write-back copies from the patched subscriber and reloads).
func loadsBack(out, patch []byte) error {
	named := map[string]bool{"?": true}
	pms, _ := jsonedit.Members(bytes.TrimSpace(patch), 0)
	for _, m := range pms {
		if k, err := jsonedit.DecodeString(bytes.TrimSpace(patch)[m.Start:m.KeyEnd]); err == nil {
			named[k] = true
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"Objects": {`)
	ms, _ := jsonedit.Members(out, 0)
	first := true
	for _, m := range ms {
		k, err := jsonedit.DecodeString(out[m.Start:m.KeyEnd])
		if err != nil || !named[k] {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.Write(out[m.Start:m.KeyEnd])
		b.WriteByte(':')
		b.Write(out[m.VS:m.VE])
	}
	b.WriteString("}}")
	if _, _, err := snapshot.LoadModel(snapshot.NewDocument("the patched subscriber", b.Bytes())); err != nil {
		return fmt.Errorf("the patched subscriber would not load back ($.Objects is the subscriber): %w", err)
	}
	return nil
}

// patchText refuses the strings of the patch value starting at v[vs] that
// could not be carried exactly (see checkPatch): invalid UTF-8 anywhere, a
// lone surrogate escape in a key. path is the value's JSON path.
func patchText(v []byte, vs int, path string) error {
	switch v[vs] {
	case '"':
		return utf8Text(v[vs:jsonedit.String(v, vs)], "the string at "+path)
	case '{':
		ms, _ := jsonedit.Members(v, vs)
		for _, m := range ms {
			raw := v[m.Start:m.KeyEnd]
			if err := utf8Text(raw, "a key in the object at "+path); err != nil {
				return err
			}
			k, _ := jsonedit.DecodeString(raw)
			at := jsonedit.ChildPath(path, k)
			if s, lone := jsonedit.LoneSurrogate(raw); lone {
				return fmt.Errorf("the key at %s holds %s, a lone UTF-16 surrogate: it has no exact decoded form, so the member it merges into would be a guess", at, s)
			}
			if err := patchText(v, m.VS, at); err != nil {
				return err
			}
		}
	case '[':
		ms, _ := jsonedit.Members(v, vs)
		for i, m := range ms {
			if err := patchText(v, m.VS, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	}
	return nil
}

// utf8Text refuses the JSON string literal quoted when it is not UTF-8.
func utf8Text(quoted []byte, what string) error {
	for i := 0; i < len(quoted); {
		r, n := utf8.DecodeRune(quoted[i:])
		if r == utf8.RuneError && n == 1 {
			return fmt.Errorf("%s holds invalid UTF-8 (byte %#x); a JSON text must be UTF-8 (RFC 8259 section 8.1), and the model written back would not load", what, quoted[i])
		}
		i += n
	}
	return nil
}

// checkNesting is checkPatch's rule on how deep the patched subscriber,
// nesting n levels at depth, may nest.
func checkNesting(n, depth int) error {
	if depth+n > snapshot.MaxDepth-1 {
		return fmt.Errorf("the patched subscriber nests deeper than %d levels (%d here, below %d enclosing levels); the model could not be read back",
			snapshot.MaxDepth-1, n, depth)
	}
	return nil
}

// applyPatch applies the RFC 7386 merge patch to the object obj (valid
// JSON), changing only the bytes of the members the patch sets or
// removes. New values are written in the style of their neighbours.
func applyPatch(obj, patch []byte) ([]byte, error) {
	patch = bytes.TrimSpace(patch)
	if !json.Valid(patch) {
		return nil, errors.New("the patch is not valid JSON")
	}
	if patch[0] != '{' {
		return nil, errors.New("the patch is not a JSON object: it would replace the whole object and its header")
	}
	if err := patchText(patch, 0, "$"); err != nil {
		return nil, err
	}
	return jsonedit.MergePatch(obj, patch, "$", patchGuard{})
}

// patchGuard refuses what a hook's patch may not do (see checkPatch): set
// a "?" key, remove or replace a value holding an object.
type patchGuard struct{}

func (patchGuard) Key(key, path string) error {
	if key == "?" {
		return fmt.Errorf(`it sets the header "?" at %s; a patch may change properties only`, path)
	}
	return nil
}

func (patchGuard) Replace(data []byte, vs int, path string, remove bool) error {
	if id, where, ok := objectIn(data, vs, path); ok {
		verb := "replaces"
		if remove {
			verb = "removes"
		}
		return fmt.Errorf("it %s object %s at %s; a patch may change properties only", verb, id, where)
	}
	return nil
}

func (patchGuard) Set(v []byte, path string) error { return headerFree(v, 0, path) }

// objectIn reports the first object (a JSON object whose "?" value is a
// JSON object) in the valid JSON value starting at data[vs], itself
// included, with its id and JSON path; path is the value's.
func objectIn(data []byte, vs int, path string) (id, where string, ok bool) {
	switch data[vs] {
	case '{':
		ms, _ := jsonedit.Members(data, vs)
		if h, ok := jsonedit.KeyIn(data, ms, "?"); ok && data[h.VS] == '{' {
			id := "(no id)"
			hms, _ := jsonedit.Members(data, h.VS)
			if m, ok := jsonedit.KeyIn(data, hms, "id"); ok {
				id = string(data[m.VS:m.VE])
				if s, err := jsonedit.DecodeString(data[m.VS:m.VE]); err == nil {
					id = s
				}
			}
			return id, path, true
		}
		for _, m := range ms {
			k, _ := jsonedit.DecodeString(data[m.Start:m.KeyEnd])
			if id, where, ok := objectIn(data, m.VS, jsonedit.ChildPath(path, k)); ok {
				return id, where, true
			}
		}
	case '[':
		ms, _ := jsonedit.Members(data, vs)
		for i, m := range ms {
			if id, where, ok := objectIn(data, m.VS, path+"["+strconv.Itoa(i)+"]"); ok {
				return id, where, true
			}
		}
	}
	return "", "", false
}

// headerFree checks that the valid JSON value starting at v[vs], which a
// patch sets, holds no key "?" anywhere; path is its JSON path.
func headerFree(v []byte, vs int, path string) error {
	switch v[vs] {
	case '{':
		ms, _ := jsonedit.Members(v, vs)
		for _, m := range ms {
			k, _ := jsonedit.DecodeString(v[m.Start:m.KeyEnd])
			if k == "?" {
				if v[m.VS] == '{' {
					return fmt.Errorf(`it adds an object (a "?" header) at %s; a patch may change properties only`, path)
				}
				return fmt.Errorf(`it sets the header key "?" at %s; a patch may change properties only`, path)
			}
			if err := headerFree(v, m.VS, jsonedit.ChildPath(path, k)); err != nil {
				return err
			}
		}
	case '[':
		ms, _ := jsonedit.Members(v, vs)
		for i, m := range ms {
			if err := headerFree(v, m.VS, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	}
	return nil
}

// RevivedBy returns the doomed objects of p, as indexes into p.Objects in
// the order the patch first names them, whose id a string value (not a
// key) of the patch equals: the write-back keeps each in the model,
// flagged destroyed, as a re-referenced object (docs/design.md, "Hooks"
// and "Write-back").
// Strings holding a lone surrogate escape equal no id.
func RevivedBy(p *order.Plan, patch []byte) []int {
	snap := p.Diff.Snapshot
	var out []int
	seen := map[int]bool{}
	var walk func(vs int)
	walk = func(vs int) {
		switch patch[vs] {
		case '"':
			raw := patch[vs:jsonedit.String(patch, vs)]
			if _, lone := jsonedit.LoneSurrogate(raw); lone {
				return
			}
			s, err := jsonedit.DecodeString(raw)
			if err != nil {
				return
			}
			if j, ok := snap.Lookup(s); ok {
				if i := p.IndexOf(snap.First(j)); i >= 0 && !seen[i] {
					seen[i] = true
					out = append(out, i)
				}
			}
		case '{', '[':
			ms, _ := jsonedit.Members(patch, vs)
			for _, m := range ms {
				walk(m.VS)
			}
		}
	}
	patch = bytes.TrimSpace(patch)
	if len(patch) > 0 {
		walk(0)
	}
	return out
}

// nesting returns how deep arrays and objects nest in the valid JSON b:
// 1 for {} or [], 0 for a scalar.
func nesting(b []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = jsonedit.String(b, i) - 1
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// PatchChecker accepts the patches of one apply run's notifications: each
// must pass checkPatch on every copy of its subscriber in the incoming
// model, on top of the patches accepted before it for that subscriber.
// The write-back applies them in notification order rather than in the
// order they were accepted; that gives the same verdict, since a patch
// that passes on a subscriber passes on it with other passing patches
// applied (they add no objects and keep every object where it was, and
// merging nests no deeper than the deeper of two values).
type PatchChecker struct {
	mu     sync.Mutex
	copies map[string][]patchedCopy // by subscriber id; nil until the first patch
}

// patchedCopy is one copy of a subscriber with the accepted patches
// applied.
type patchedCopy struct {
	data  []byte
	depth int
}

// Accept checks patch for subscriber sub of plan p and, when it passes,
// records it so that later patches for sub are checked on top of it. A
// subscriber that is not in the incoming model (doomed, or the whole
// environment is deleted) leaves the model: the write-back drops its
// patches, so any patch passes.
func (c *PatchChecker) Accept(p *order.Plan, sub string, patch json.RawMessage) error {
	in := p.Diff.Incoming
	if in.Null {
		return nil
	}
	if _, ok := in.Lookup(sub); !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.copies == nil {
		c.copies = map[string][]patchedCopy{}
		want := map[string]bool{}
		for _, n := range p.Notifications {
			want[n.Subscriber] = true
		}
		for k := range in.Objects {
			o := &in.Objects[k]
			if id := in.ID(int32(k)); o.HasID() && want[id] {
				c.copies[id] = append(c.copies[id], patchedCopy{data: in.Doc.Data[o.Start:o.End], depth: in.Depth(int32(k))})
			}
		}
	}
	list := c.copies[sub]
	next := make([]patchedCopy, len(list))
	for k, cp := range list {
		out, err := checkPatch(cp.data, patch, cp.depth)
		if err != nil {
			if len(list) > 1 {
				return fmt.Errorf("copy %d of %d of %s: %w", k+1, len(list), sub, err)
			}
			return err
		}
		next[k] = patchedCopy{data: out, depth: cp.depth}
	}
	c.copies[sub] = next
	return nil
}
