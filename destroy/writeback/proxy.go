package writeback

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"

	"github.com/objgc/objgc/internal/jsonedit"
)

// proxyMin is the size in bytes from which a patched subscriber is
// written as a proxy, not held patched (a variable for the tests).
var proxyMin = 1 << 20

// proxySub is a large patched subscriber copy, held as the merge patches'
// result on a proxy of it: the members the patches name (and the header)
// as they are, every other member's value replaced by a placeholder
// string, a hole that Objects' writer fills with that member's value
// copied from the model. The patches change only the members they name,
// so the proxy's result, holes filled, is the patched copy's bytes.
type proxySub struct {
	out   []byte
	refs  []snapRef // references in out to destroyed objects
	holes []proxyHole
	// named holds the offsets in the model of the values of the members
	// written in out.
	named [][2]int
}

// proxyHole is a placeholder at out in proxySub.out standing for the
// model's bytes [vs, ve).
type proxyHole struct{ out, vs, ve int }

// copies reports whether the model's offset off is in a hole: the proxy's
// writer copies it from the model rather than from out.
func (px *proxySub) copies(off int) bool {
	for _, n := range px.named {
		if off >= n[0] && off < n[1] {
			return false
		}
	}
	return true
}

// newProxy applies patches to incoming copy c through a proxy; rp writes
// the model with the dropped objects out and patched copies in. The
// errors are checkPatch's on the whole copy.
func (wb *writeBack) newProxy(c int32, patches []json.RawMessage, rp *jsonedit.Rewriter, data []byte) (*proxySub, error) {
	in := wb.in
	o := &in.Objects[c]
	named := namedKeys(patches)
	var nonce [12]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, fmt.Errorf("write-back: %w", err)
	}
	placeholder := func(k int) string { return fmt.Sprintf(`"objgc-hole-%x-%d"`, nonce, k) }
	px := &proxySub{}
	rq := jsonedit.NewRewriter(data)
	drops := jsonedit.NewRewriter(data) // the dropped objects out, for the depth
	rp.Each(func(off int, e *jsonedit.Edit) {
		if e.Remove {
			rq.At(off).Remove = true
			drops.At(off).Remove = true
		}
	})
	ms, _ := jsonedit.Members(data, int(o.Start))
	holes := map[string][2]int{}
	deepest := 0
	for k, m := range ms {
		if e := rp.Lookup(m.VS); e != nil && e.Remove {
			continue
		}
		key, err := jsonedit.DecodeString(data[m.Start:m.KeyEnd])
		if err == nil && named[key] {
			rq.At(m.VS).Write = func(w jsonedit.Writer, s, e int) error { return rp.Value(w, s, e) }
			px.named = append(px.named, [2]int{m.VS, m.VE})
			continue
		}
		ph := placeholder(k)
		holes[ph] = [2]int{m.VS, m.VE}
		rq.At(m.VS).Write = func(w jsonedit.Writer, s, e int) error { _, err := w.WriteString(ph); return err }
		var nw nestingWriter
		if err := drops.Value(&nw, m.VS, m.VE); err != nil {
			return nil, err
		}
		deepest = max(deepest, nw.deepest)
	}
	var b bytes.Buffer
	if err := rq.Inner(&b, int(o.Start), int(o.End)); err != nil {
		return nil, err
	}
	obj := b.Bytes()
	for _, patch := range patches {
		var err error
		if obj, err = applyPatch(obj, patch); err == nil {
			err = checkNesting(max(nesting(obj), 1+deepest), in.Depth(c))
		}
		if err != nil {
			return nil, fmt.Errorf("write-back: patch for subscriber %s at %s: %w", in.ID(c), in.ObjectPath(c), err)
		}
	}
	px.out = obj
	outMs, _ := jsonedit.Members(obj, 0)
	for _, m := range outMs {
		if h, ok := holes[string(obj[m.VS:m.VE])]; ok {
			px.holes = append(px.holes, proxyHole{out: m.VS, vs: h[0], ve: h[1]})
		}
	}
	if len(px.holes) != len(holes) {
		return nil, fmt.Errorf("write-back: internal error: %d of %d members of %s lost in patching", len(holes)-len(px.holes), len(holes), in.ID(c))
	}
	refs, err := wb.destroyedRefs(obj)
	if err != nil {
		return nil, err
	}
	px.refs = refs
	return px, nil
}

// namedKeys returns the keys the patches set at their top level, and the
// header's: the members a proxy holds as they are.
func namedKeys(patches []json.RawMessage) map[string]bool {
	named := map[string]bool{"?": true}
	for _, p := range patches {
		p = bytes.TrimSpace(p)
		if !json.Valid(p) || p[0] != '{' {
			continue // checkPatch says why
		}
		ms, _ := jsonedit.Members(p, 0)
		for _, m := range ms {
			if k, err := jsonedit.DecodeString(p[m.Start:m.KeyEnd]); err == nil {
				named[k] = true
			}
		}
	}
	return named
}
