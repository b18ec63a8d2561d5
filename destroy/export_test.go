package destroy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/objgc/objgc/destroy/order"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/objgc/objgc/destroy/journal"
	"github.com/objgc/objgc/internal/jsonedit"
)

// Helpers only the tests call.

// WriteBack writes the model BuildWriteBack decides to w; nothing is
// written when BuildWriteBack returns an error.
func WriteBack(w io.Writer, p *order.Plan, out Effects, attributes json.RawMessage, onDanglingKeep bool) error {
	m, err := BuildWriteBack(p, out, attributes, onDanglingKeep)
	if err != nil {
		return err
	}
	if _, err := m.WriteTo(w); err != nil {
		return fmt.Errorf("writing the model: %w", err)
	}
	return nil
}

// Envelope returns the envelope document, in the layout
// BuildWriteBack documents.
func (m *WrittenModel) Envelope() []byte {
	var b bytes.Buffer
	m.WriteTo(&b)
	return b.Bytes()
}

// Values returns the three values WriteTo writes, each written alone.
func (m *WrittenModel) Values() (objects, objectsCopy, attributes []byte) {
	var out [3]bytes.Buffer
	for k, write := range []func(jsonedit.Writer) error{m.objects, m.objectsCopy, m.attributes} {
		if err := write(&out[k]); err != nil {
			panic(err)
		}
	}
	return out[0].Bytes(), out[1].Bytes(), out[2].Bytes()
}

// EnvelopeOf is the envelope WriteTo writes of the three values.
func EnvelopeOf(objects, objectsCopy, attributes []byte) []byte {
	return []byte("{\n  \"Objects\": " + string(objects) + ",\n  \"ObjectsCopy\": " + string(objectsCopy) +
		",\n  \"Attributes\": " + string(attributes) + "\n}\n")
}

// testInputs are the inputs of the journals the tests open.
func testInputs() []journal.Input {
	return []journal.Input{{Path: "snap.json", SHA256: strings.Repeat("a", 64)}, {Path: "graph.json", SHA256: strings.Repeat("b", 64)}}
}

// hookEnded writes a hook run's result to j (EndHook without the Seq).
func hookEnded(j *journal.Journal, k journal.HookKey, res journal.HookResult) error {
	_, err := j.EndHook(k, res)
	return err
}

// readLines returns the lines of the journal at path, which must end in
// a newline.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("journal %q does not end in a newline", b)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
