package planfile

import (
	"strings"
	"testing"
)

// TestParseTellsModels checks that a model is told from a saved
// plan by its first key, without a lookup through the rest (a model's
// trees may be hundreds of megabytes: here a tree that is not even JSON
// past its start must not be read), and that a plan whose keys were
// reordered (jq -S) is still a plan.
func TestParseTellsModels(t *testing.T) {
	for _, first := range []string{"Objects", "ObjectsCopy", "Attributes", "model", "?"} {
		data := []byte("{\n  \"" + first + "\": {\"?\": {\"id\": \"a\"}, \"x\": [[[ not json")
		if sp, err := Parse("m.json", data); sp != nil || err != nil {
			t.Errorf("%s: %v, %v", first, sp, err)
		}
	}
	sorted := []byte(`{"cache_dir": "", "format_version": "0", "inputs": []}`)
	if _, err := Parse("p.json", sorted); err == nil || !strings.Contains(err.Error(), "format_version") {
		t.Errorf("a plan with reordered keys was not read as a plan: %v", err)
	}
}
