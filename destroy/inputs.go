package destroy

import (
	"io"
	"sync"

	"github.com/objgc/objgc/snapshot"
)

// Inputs are the documents a plan or an apply reads and the two trees
// compared: a model file (Model: an envelope or an engine task holding
// both trees), or a snapshot file and a graph file.
type Inputs struct {
	Model, SnapshotFile, GraphFile *snapshot.Document
	Snapshot, Incoming             *snapshot.Tree
}

// Docs returns the documents read, in the order they are named: the
// model, or the snapshot then the graph; none for nil.
func (in *Inputs) Docs() []*snapshot.Document {
	if in == nil {
		return nil
	}
	if in.Model != nil {
		return []*snapshot.Document{in.Model}
	}
	return []*snapshot.Document{in.SnapshotFile, in.GraphFile}
}

// Close unmaps the mapped documents (snapshot.Document.Close): nothing
// read from them but the trees' ids may be used after it.
func (in *Inputs) Close() {
	for _, d := range in.Docs() {
		d.Close()
	}
}

// CheckMapped returns a *snapshot.ChangedError for the first mapped input
// whose file changed since it was mapped (snapshot.Document.CheckMapped):
// a plan or a write-back made from it may mix old and new bytes.
func (in *Inputs) CheckMapped() error {
	for _, d := range in.Docs() {
		if err := d.CheckMapped(); err != nil {
			return err
		}
	}
	return nil
}

// ReadInputs reads model (snapshot.LoadModel), or snapFile and graphFile
// in parallel (snapshot.LoadSnapshot, snapshot.LoadGraph: each is a pass
// over its bytes). A name "-" reads stdin; at most one may. read, when not
// nil, is the model file read already: it is used as it is when the file
// is unchanged since (snapshot.Document.Unchanged), and read again when
// not. With hash, the sha256 of each document (snapshot.Document.SHA256,
// which a JSON plan and apply name) is computed while it is scanned; a
// text plan does without. Errors
// name the file (*snapshot.SyntaxError, *snapshot.ModelError, or the
// reading error).
func ReadInputs(stdin io.Reader, model, snapFile, graphFile string, read *snapshot.Document, hash bool) (*Inputs, error) {
	in := &Inputs{}
	if model != "" {
		doc := read
		if doc == nil || doc.Name != model || !doc.Unchanged() {
			if doc != nil {
				doc.Close()
			}
			var err error
			if doc, err = snapshot.ReadDocument(model, stdin); err != nil {
				return nil, err
			}
		}
		in.Model = doc
		if hash {
			doc.Hash() // hash while scanning, on the other core
		}
		var err error
		in.Snapshot, in.Incoming, err = snapshot.LoadModel(doc)
		if err != nil {
			return nil, err
		}
		return in, nil
	}
	var wg sync.WaitGroup
	var snapErr, graphErr error
	load := func(name string, doc **snapshot.Document, tree **snapshot.Tree, fn func(*snapshot.Document) (*snapshot.Tree, error), errp *error) {
		defer wg.Done()
		d, err := snapshot.ReadDocument(name, stdin)
		if err != nil {
			*errp = err
			return
		}
		*doc = d
		if hash {
			d.Hash()
		}
		*tree, *errp = fn(d)
	}
	wg.Add(2)
	go load(snapFile, &in.SnapshotFile, &in.Snapshot, snapshot.LoadSnapshot, &snapErr)
	go load(graphFile, &in.GraphFile, &in.Incoming, snapshot.LoadGraph, &graphErr)
	wg.Wait()
	if snapErr != nil {
		return nil, snapErr
	}
	if graphErr != nil {
		return nil, graphErr
	}
	return in, nil
}

// Unchanged reports whether every document's file is still what was
// read (snapshot.Document.Unchanged).
func (in *Inputs) Unchanged() bool {
	for _, d := range in.Docs() {
		if !d.Unchanged() {
			return false
		}
	}
	return true
}
