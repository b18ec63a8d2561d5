package destroy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Helpers only the tests call.

// WriteBack writes the model BuildWriteBack builds to w; nothing is
// written when an error is returned.
func WriteBack(w io.Writer, p *Plan, out Effects, attributes json.RawMessage, onDanglingKeep bool) error {
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
	b.Grow(len(m.Objects) + len(m.ObjectsCopy) + len(m.Attributes) + 64)
	m.WriteTo(&b)
	return b.Bytes()
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
