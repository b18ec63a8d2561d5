package snapshot

import (
	"sort"

	"github.com/objgc/objgc/internal/jsonedit"
)

// form is the shape of a document's root.
type form int

const (
	formBare     form = iota // an object tree
	formEnvelope             // {"Objects", "ObjectsCopy", "Attributes"}
	formTask                 // {"model": envelope, ...}
)

// Span is the byte range Data[Start:End] of a document.
type Span struct{ Start, End int }

// Envelope is where a Murano envelope {"Objects", "ObjectsCopy",
// "Attributes"} sits in its document, as the reader found it: the write-back
// replaces these bytes without parsing the document again.
type Envelope struct {
	// Span is the envelope's JSON object: the whole document's root, or
	// for an engine task the value of its "model" key.
	Span
	// Task is set for an engine task {"model": envelope, ...}: the bytes
	// outside Span are the task's own and are kept as they are.
	Task bool
	// Attributes is the value of the envelope's "Attributes" key; nil
	// when the key is missing.
	Attributes *Span
}

// parsed is a scanned document with its form and envelope keys.
type parsed struct {
	doc      *Document
	idx      *flatIndex
	form     form
	envelope []keySpan // the envelope's keys (root's or model's)
	envPath  string    // "$" or "$.model"
	env      *Envelope // nil for a bare tree
}

func parse(doc *Document) (*parsed, error) {
	idx, err := scan(doc)
	if err != nil {
		return nil, err
	}
	p := &parsed{doc: doc, idx: idx, envPath: "$"}
	if idx.rootKind != '{' {
		return p, nil
	}
	if n := len(idx.objects); n > 0 && idx.objects[n-1].encl == -1 && isRoot(doc.Data, int(idx.objects[n-1].Start)) {
		if len(idx.subs) > 0 {
			// A model object whose "Objects" key was read apart: its
			// tree needs every object in one index.
			if idx, err = scanWith(doc, false); err != nil {
				return nil, err
			}
			p.idx = idx
		}
		return p, nil // the root is an object of the model
	}
	has := func(keys []keySpan, k string) (keySpan, bool) {
		for _, ks := range keys {
			if ks.key == k {
				return ks, true
			}
		}
		return keySpan{}, false
	}
	_, o := has(idx.rootKeys, "Objects")
	_, oc := has(idx.rootKeys, "ObjectsCopy")
	_, at := has(idx.rootKeys, "Attributes")
	switch {
	case o || oc:
		p.form, p.envelope = formEnvelope, idx.rootKeys
		p.env = &Envelope{Span: Span{jsonedit.WS(doc.Data, 0), rootEnd(doc.Data)}}
	case at:
		return nil, &ModelError{File: doc.Name, Path: "$", Msg: `an envelope needs "Objects" or "ObjectsCopy" (either may be null); found only "Attributes"`}
	default:
		m, ok := has(idx.rootKeys, "model")
		if !ok || doc.Data[m.start] != '{' {
			return p, nil // a plain root: a bare tree
		}
		_, o = has(idx.taskKeys, "Objects")
		_, oc = has(idx.taskKeys, "ObjectsCopy")
		if !o && !oc {
			return nil, &ModelError{File: doc.Name, Path: "$.model", Msg: `an engine task's model must be an envelope with "Objects" or "ObjectsCopy"`}
		}
		p.form, p.envelope, p.envPath = formTask, idx.taskKeys, "$.model"
		p.env = &Envelope{Span: Span{int(m.start), int(m.end)}, Task: true}
	}
	if a, ok := p.key("Attributes"); ok {
		// Murano's engine iterates the rows of Attributes: anything but an
		// array (or null, read as none) is a model it cannot load, and the
		// write-back could not drop the rows of destroyed objects from it.
		if c := doc.Data[a.start]; c != '[' && c != 'n' {
			return nil, &ModelError{File: doc.Name, Path: p.envPath + ".Attributes", Msg: "Attributes must be an array of [objectId, typeName, key, value] rows or null; found " + jsonKind(c)}
		}
		p.env.Attributes = &Span{int(a.start), int(a.end)}
	}
	return p, nil
}

// jsonKind names the kind of the JSON value that starts with c.
func jsonKind(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// rootEnd returns the end of the document's root value: the length of
// data without trailing white space.
func rootEnd(data []byte) int {
	end := len(data)
	for end > 0 {
		switch data[end-1] {
		case ' ', '\t', '\n', '\r':
			end--
			continue
		}
		break
	}
	return end
}

// isRoot reports whether off is the offset of the document's root value.
func isRoot(data []byte, off int) bool {
	return jsonedit.WS(data, 0) == off
}

func (p *parsed) key(k string) (keySpan, bool) {
	for _, ks := range p.envelope {
		if ks.key == k {
			return ks, true
		}
	}
	return keySpan{}, false
}

// tree builds the index of the tree data[start:end] at path.
func (p *parsed) tree(path string, start, end int) (*Tree, error) {
	data := p.doc.Data
	t := &Tree{Doc: p.doc, Path: path, Start: start, End: end, Envelope: p.env}
	switch data[start] {
	case 'n':
		t.Null = true
		t.finish(0, nil, nil)
		return t, nil
	case '{', '[':
	default:
		return nil, &ModelError{File: p.doc.Name, Path: path, Msg: "expected an object tree (a JSON object or array) or null"}
	}
	idx := p.idx
	for _, sub := range p.idx.subs {
		if sub.start == start && sub.end == end {
			idx = sub.idx // the tree was scanned apart
		}
	}
	t.segs, t.keySegs, t.ids, t.ext, t.legacies = idx.segs, idx.keySegs, idx.ids, idx.ext, idx.legacies
	t.farHeaders = idx.farHeaders
	t.extTypes = make([]Type, len(t.ext))
	for k, v := range t.ext {
		t.extTypes[k], _ = ParseType(v)
	}
	objs := idx.objects
	lo := sort.Search(len(objs), func(i int) bool { return int(objs[i].End) > start })
	hi := sort.Search(len(objs), func(i int) bool { return int(objs[i].End) > end })
	t.Objects = objs[lo:hi:hi]
	t.segEnd = int32(len(idx.segs))
	if hi < len(objs) {
		t.segEnd = objs[hi].segLo
	}
	strs := idx.strs
	slo := sort.Search(len(strs), func(i int) bool { return int(strs[i].off) >= start })
	shi := sort.Search(len(strs), func(i int) bool { return int(strs[i].off) >= end })
	t.strs = strs[slo:shi:shi]
	p.doc.reading()
	defer p.doc.leaving()
	t.finish(lo, idx.deps, idx.exts)
	return t, nil
}

func (p *parsed) bare() (*Tree, error) {
	start := jsonedit.WS(p.doc.Data, 0)
	return p.tree("$", start, len(p.doc.Data))
}

func (p *parsed) envelopeTree(k string) (*Tree, bool, error) {
	ks, ok := p.key(k)
	if !ok {
		return nil, false, nil
	}
	t, err := p.tree(p.envPath+"."+k, int(ks.start), int(ks.end))
	return t, true, err
}

// treeOrEmpty is envelopeTree, or for a missing key an empty tree (no
// objects) in the envelope.
func (p *parsed) treeOrEmpty(k string) (*Tree, error) {
	t, ok, err := p.envelopeTree(k)
	if !ok && err == nil {
		t = emptyTree(p.doc, p.envPath+"."+k)
		t.Envelope = p.env
	}
	return t, err
}

// emptyTree is the tree of a missing key: no objects.
func emptyTree(doc *Document, path string) *Tree {
	t := &Tree{Doc: doc, Path: path, Null: true}
	t.finish(0, nil, nil)
	return t
}

// isSavedPlan reports whether a root object with keys is a JSON plan (its
// "format_version" and "groups", docs/plan-format.md) rather than a model.
func isSavedPlan(keys []keySpan) bool {
	var version, groups bool
	for _, k := range keys {
		version = version || k.key == "format_version"
		groups = groups || k.key == "groups"
	}
	return version && groups
}

// LoadModel reads a model file in Murano's own form, an envelope
// {"Objects": incoming|null, "ObjectsCopy": snapshot|null, "Attributes":
// [...]} or an engine task {"model": envelope}, and returns the snapshot
// (ObjectsCopy) and the incoming model (Objects). A missing ObjectsCopy is
// an empty snapshot (a first deployment); Objects null means the whole
// environment is deleted. Errors are *SyntaxError or *ModelError, or a
// *ChangedError for a mapped file truncated while it is read.
func LoadModel(doc *Document) (snap, incoming *Tree, err error) {
	err = do(func() error {
		p, err := parse(doc)
		if err != nil {
			return err
		}
		if p.form == formBare && isSavedPlan(p.idx.rootKeys) {
			return &ModelError{File: doc.Name, Path: "$", Msg: "this is a plan saved by objgc plan --out, not a model: to see it, run objgc show " + doc.Name + "; to carry it out, run objgc apply " + doc.Name}
		}
		if p.form == formBare {
			return &ModelError{File: doc.Name, Path: "$", Msg: `expected a Murano envelope {"Objects": ..., "ObjectsCopy": ...} or an engine task {"model": ...}; for two bare object trees use --snapshot and --graph`}
		}
		snap, incoming, err = p.pair()
		return err
	}, doc)
	if err != nil {
		return nil, nil, err
	}
	return snap, incoming, nil
}

// pair builds the two trees of an envelope, in parallel: each tree's id
// index is a pass over its objects (a quarter of a plan's time on the 1M
// model), and the trees share only what the scan recorded, which they read
// (each writes its own range of the objects array).
func (p *parsed) pair() (snap, incoming *Tree, err error) {
	var snapErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		snapErr = do(func() (err error) {
			snap, err = p.treeOrEmpty("ObjectsCopy")
			return err
		}, p.doc)
	}()
	incoming, err = p.treeOrEmpty("Objects")
	<-done
	if err != nil {
		return nil, nil, err // the incoming model's error first, as before
	}
	if snapErr != nil {
		return nil, nil, snapErr
	}
	return snap, incoming, nil
}

// LoadSnapshot reads the snapshot given with --snapshot: a bare object
// tree, or from an envelope or task its ObjectsCopy when the key is
// present, else its Objects. Errors are LoadModel's.
func LoadSnapshot(doc *Document) (t *Tree, err error) {
	err = do(func() error {
		p, err := parse(doc)
		switch {
		case err != nil:
			return err
		case p.form == formBare:
			t, err = p.bare()
			return err
		}
		var ok bool
		if t, ok, err = p.envelopeTree("ObjectsCopy"); ok || err != nil {
			return err
		}
		t, _, err = p.envelopeTree("Objects")
		return err
	}, doc)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// LoadGraph reads the incoming model given with --graph: a bare object tree,
// or from an envelope or task its Objects (missing: no objects). Errors
// are LoadModel's.
func LoadGraph(doc *Document) (t *Tree, err error) {
	err = do(func() error {
		p, err := parse(doc)
		switch {
		case err != nil:
			return err
		case p.form == formBare:
			t, err = p.bare()
		default:
			t, err = p.treeOrEmpty("Objects")
		}
		return err
	}, doc)
	if err != nil {
		return nil, err
	}
	return t, nil
}
