package hook

import (
	"encoding/json"
	"testing"
)

func TestDocumentMarshal(t *testing.T) {
	b, err := Document{Event: EventNotify, Object: json.RawMessage(`{"?": {"id": "o"}}`),
		Subscriber: json.RawMessage(`{"?": {"id": "s"}}`)}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"event":"notify","object":{"?":{"id":"o"}},"owner_id":null,"subscriber":{"?":{"id":"s"}}}`; string(b) != want {
		t.Errorf("Marshal = %s, want %s", b, want)
	}
}
