package snapshot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnvelopeSpans: the reader records where the envelope and its
// Attributes sit, so that the write-back replaces them without parsing the
// document again.
func TestEnvelopeSpans(t *testing.T) {
	for _, tc := range []struct {
		name, data      string
		task            bool
		envelope, attrs string // "" attrs: no Attributes key
		bare            bool
	}{
		{name: "envelope", data: ` {"Objects": null, "Attributes": [1]}` + "\n", envelope: `{"Objects": null, "Attributes": [1]}`, attrs: `[1]`},
		{name: "no attributes", data: `{"ObjectsCopy": null}`, envelope: `{"ObjectsCopy": null}`},
		{name: "task", data: `{"token": "x", "model": {"Objects": null, "Attributes": []}, "id": 1}`, task: true, envelope: `{"Objects": null, "Attributes": []}`, attrs: `[]`},
		{name: "bare", data: `{"?": {"id": "a", "type": "T"}}`, bare: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := NewDocument("m.json", []byte(tc.data))
			tree, err := LoadGraph(doc)
			if err != nil {
				t.Fatal(err)
			}
			env := tree.Envelope
			if tc.bare {
				if env != nil {
					t.Fatalf("bare tree has envelope %+v", env)
				}
				return
			}
			if env == nil {
				t.Fatal("no envelope")
			}
			if got := tc.data[env.Start:env.End]; got != tc.envelope || env.Task != tc.task {
				t.Errorf("envelope %q task %v, want %q task %v", got, env.Task, tc.envelope, tc.task)
			}
			switch {
			case tc.attrs == "" && env.Attributes != nil:
				t.Errorf("attributes %+v, want none", env.Attributes)
			case tc.attrs != "" && (env.Attributes == nil || tc.data[env.Attributes.Start:env.Attributes.End] != tc.attrs):
				t.Errorf("attributes %+v, want %q", env.Attributes, tc.attrs)
			}
			// The snapshot of the same document shares the envelope.
			snap, _, err := LoadModel(doc)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Envelope == nil || snap.Envelope.Span != env.Span || snap.Envelope.Task != env.Task {
				t.Errorf("snapshot envelope %+v, want %+v", snap.Envelope, env)
			}
		})
	}
}

// TestDocumentUnchanged: a document read from a file is unchanged while
// the file is the same file with the same size and modification time; a
// file renamed over it or rewritten is a change; a document not read from
// a file never is unchanged.
func TestDocumentUnchanged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(path, `{"Objects": null}`)
	doc, err := ReadDocument(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Unchanged() {
		t.Fatal("unchanged file reported changed")
	}
	write(path, `{"Objects": null, "ObjectsCopy": null}`)
	if doc.Unchanged() {
		t.Error("file rewritten in place (another size) reported unchanged")
	}
	doc, err = ReadDocument(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	next := filepath.Join(dir, "next.json")
	write(next, `{"Objects": null, "ObjectsCopy": null}`) // the same size
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(next, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	if doc.Unchanged() {
		t.Error("file renamed over it (same size and mtime) reported unchanged")
	}
	if NewDocument(path, nil).Unchanged() {
		t.Error("NewDocument reported unchanged")
	}
	stdin, err := ReadDocument("-", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if stdin.Unchanged() {
		t.Error("standard input reported unchanged")
	}
}
