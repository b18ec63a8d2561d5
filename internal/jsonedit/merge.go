package jsonedit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Guard decides what a merge patch may do: MergePatch calls it before each
// change and returns its first error unchanged.
type Guard interface {
	// Key is called for each key of a patch object merged into the
	// object at path.
	Key(key, path string) error
	// Replace is called for the target value starting at data[vs], at
	// path, that the patch removes (remove is true) or replaces with a
	// value it does not merge into.
	Replace(data []byte, vs int, path string, remove bool) error
	// Set is called for each value v the patch writes as a whole, at path.
	Set(v []byte, path string) error
}

// MergePatch applies the RFC 7386 merge patch object patch to the object
// target (both valid JSON objects), changing only the bytes of the
// members the patch sets or removes; new values are written in the
// indentation of their neighbours, with their null members removed. path
// is target's JSON path, used for the paths given to g. An unchanged
// target is returned as it is.
func MergePatch(target, patch []byte, path string, g Guard) ([]byte, error) {
	type pv struct {
		raw, val []byte
	}
	var order []string
	byKey := map[string]pv{}
	pms, _ := Members(patch, 0)
	for _, m := range pms {
		k, err := DecodeString(patch[m.Start:m.KeyEnd])
		if err != nil {
			return nil, err
		}
		if err := g.Key(k, path); err != nil {
			return nil, err
		}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = pv{raw: patch[m.Start:m.KeyEnd], val: patch[m.VS:m.VE]}
	}
	tms, end := Members(target, 0)
	prefix, unit := indentation(target, tms, end)
	r := NewRewriter(target)
	seen := map[string]bool{}
	for _, m := range tms {
		k, err := DecodeString(target[m.Start:m.KeyEnd])
		if err != nil {
			return nil, err
		}
		p, ok := byKey[k]
		if !ok {
			continue
		}
		seen[k] = true
		at := ChildPath(path, k)
		if s, lone := LoneSurrogate(target[m.Start:m.KeyEnd]); lone {
			// It decodes as U+FFFD: which patch key it means is not known.
			return nil, fmt.Errorf("the key at %s holds %s, a lone UTF-16 surrogate: no patch key can be matched with it exactly", at, s)
		}
		switch {
		case string(p.val) == "null":
			if err := g.Replace(target, m.VS, at, true); err != nil {
				return nil, err
			}
			r.At(m.VS).Remove = true
		case p.val[0] == '{' && target[m.VS] == '{':
			merged, err := MergePatch(target[m.VS:m.VE], p.val, at, g)
			if err != nil {
				return nil, err
			}
			r.At(m.VS).Write = func(b Writer, s, e int) error { b.Write(merged); return nil }
		default:
			if err := g.Replace(target, m.VS, at, false); err != nil {
				return nil, err
			}
			if err := g.Set(p.val, at); err != nil {
				return nil, err
			}
			v, err := newValue(p.val, prefix, unit)
			if err != nil {
				return nil, err
			}
			r.At(m.VS).Write = func(b Writer, s, e int) error { b.Write(v); return nil }
		}
	}
	for _, k := range order {
		p := byKey[k]
		if seen[k] || string(p.val) == "null" {
			continue
		}
		if err := g.Set(p.val, ChildPath(path, k)); err != nil {
			return nil, err
		}
		v, err := newValue(p.val, prefix, unit)
		if err != nil {
			return nil, err
		}
		r.At(0).Adds = append(r.At(0).Adds, Addition{Key: p.raw, Value: func(b Writer) error { b.Write(v); return nil }})
	}
	if r.Len() == 0 {
		return target, nil
	}
	var b bytes.Buffer
	err := r.Value(&b, 0, len(target))
	return b.Bytes(), err
}

// indentation returns the line prefix of the members of the object and
// the unit of one more level, or "" and "" for an object on one line.
func indentation(data []byte, ms []Member, end int) (prefix, unit string) {
	if len(ms) == 0 {
		return "", ""
	}
	lead := data[ms[len(ms)-1].Lead:ms[len(ms)-1].Start]
	nl := bytes.LastIndexByte(lead, '\n')
	if nl < 0 {
		return "", ""
	}
	prefix = string(lead[nl+1:])
	closing := data[ms[len(ms)-1].VE:end]
	outer := ""
	if c := bytes.LastIndexByte(closing, '\n'); c >= 0 {
		outer = string(closing[c+1:])
	}
	unit = strings.TrimPrefix(prefix, outer)
	if unit == prefix || unit == "" {
		unit = "  "
	}
	return prefix, unit
}

// newValue returns the value a merge patch value v sets where the target
// has no object to merge into: v with null members of objects removed
// (RFC 7386), indented with prefix and unit, or compact when unit is "".
func newValue(v []byte, prefix, unit string) ([]byte, error) {
	var c bytes.Buffer
	if err := json.Compact(&c, v); err != nil {
		return nil, err
	}
	stripped := stripNulls(c.Bytes())
	if unit == "" {
		return stripped, nil
	}
	var b bytes.Buffer
	if err := json.Indent(&b, stripped, prefix, unit); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// stripNulls removes the null members of the compact JSON object v, at
// every level reached through objects.
func stripNulls(v []byte) []byte {
	if v[0] != '{' {
		return v
	}
	ms, _ := Members(v, 0)
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for _, m := range ms {
		val := v[m.VS:m.VE]
		if string(val) == "null" {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(v[m.Start:m.KeyEnd])
		b.WriteByte(':')
		b.Write(stripNulls(val))
		n++
	}
	b.WriteByte('}')
	return b.Bytes()
}
