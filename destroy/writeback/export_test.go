package writeback

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/internal/jsonedit"
)

// Helpers only the tests call.

// WriteBack writes the model Build decides to w; nothing is
// written when Build returns an error.
func WriteBack(w io.Writer, p *order.Plan, out Effects, attributes json.RawMessage, onDanglingKeep bool) error {
	m, err := Build(p, out, attributes, onDanglingKeep)
	if err != nil {
		return err
	}
	if _, err := m.WriteTo(w); err != nil {
		return fmt.Errorf("writing the model: %w", err)
	}
	return nil
}

// Envelope returns the envelope document, in the layout
// Build documents.
func (m *Model) Envelope() []byte {
	var b bytes.Buffer
	m.WriteTo(&b)
	return b.Bytes()
}

// Values returns the three values WriteTo writes, each written alone.
func (m *Model) Values() (objects, objectsCopy, attributes []byte) {
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
