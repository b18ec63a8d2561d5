package hook

import (
	"encoding/json"
	"fmt"
)

// Document is the JSON document a hook reads on stdin (docs/hooks.md).
type Document struct {
	// Event is "destroy" or "notify", as OBJGC_EVENT.
	Event string `json:"event"`
	// Object is the doomed object as in the snapshot, owned objects
	// inline.
	Object json.RawMessage `json:"object"`
	// OwnerID is the id of the object's owner; null for a top-level
	// object.
	OwnerID *string `json:"owner_id"`
	// Subscriber is the subscriber whose handler runs, as in the incoming
	// model; notifications only.
	Subscriber json.RawMessage `json:"subscriber,omitempty"`
}

// Marshal encodes d for Invocation.Stdin.
func (d Document) Marshal() ([]byte, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encoding hook document: %w", err)
	}
	return b, nil
}
