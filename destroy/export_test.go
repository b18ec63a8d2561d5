package destroy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/objgc/objgc/destroy/order"
	"io"

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

// States returns every lifecycle state, in lifecycle order.
func States() []State {
	return []State{StateAlive, StateDoomed, StateNotified, StateDestroying,
		StateDestroyed, StateRemoved, StateFailed}
}

// HookEnded writes a hook run's result (EndHook without the Seq).
func (j *Journal) HookEnded(k HookKey, res HookResult) error {
	_, err := j.EndHook(k, res)
	return err
}
