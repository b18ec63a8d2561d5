package modelgen

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// TestWriteModel: the envelope holds the incoming model as Objects and the
// snapshot as ObjectsCopy, each equal to its own file, and its reported
// size is the file's.
func TestWriteModel(t *testing.T) {
	dir := t.TempDir()
	snap, inc, _, err := WriteFiles(dir, Config{Objects: 2000, RemoveApps: 0.2, Seed: 7, Indent: true})
	if err != nil {
		t.Fatal(err)
	}
	path, size, err := WriteModel(dir, snap, inc)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) != size {
		t.Errorf("WriteModel reported %d bytes, the file has %d", size, len(data))
	}
	var envelope map[string]any
	if err := json.Unmarshal(data, &envelope); err != nil {
		t.Fatalf("model.json: %v", err)
	}
	if len(envelope) != 2 {
		t.Errorf("model.json has keys %v, want Objects and ObjectsCopy", reflect.ValueOf(envelope).MapKeys())
	}
	for key, file := range map[string]string{"Objects": inc, "ObjectsCopy": snap} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var want any
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if !reflect.DeepEqual(envelope[key], want) {
			t.Errorf("model.json's %s differs from %s", key, file)
		}
	}
}
