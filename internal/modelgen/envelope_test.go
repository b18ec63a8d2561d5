package modelgen

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
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

// TestWriteHookBench: the hook comparison's model dooms exactly the n ids
// of ids.txt, all of class bench.Obj, and its hook is executable.
func TestWriteHookBench(t *testing.T) {
	model, hook, ids, err := WriteHookBench(t.TempDir(), 25)
	if err != nil {
		t.Fatal(err)
	}
	var envelope struct {
		Objects     map[string]any
		ObjectsCopy struct {
			Services []struct {
				Header struct{ ID, Type string } `json:"?"`
			}
		}
	}
	data, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &envelope); err != nil {
		t.Fatalf("model.json: %v", err)
	}
	idList, err := os.ReadFile(ids)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range envelope.ObjectsCopy.Services {
		if s.Header.Type != HookClass+"/1.0.0@bench" {
			t.Errorf("object %s has type %q", s.Header.ID, s.Header.Type)
		}
		got = append(got, s.Header.ID+"\n")
	}
	if len(got) != 25 || strings.Join(got, "") != string(idList) {
		t.Errorf("ids.txt %q does not list the snapshot's %d objects %q", idList, len(got), got)
	}
	if services, _ := envelope.Objects["services"].([]any); len(services) != 0 {
		t.Errorf("the incoming model keeps %d services, want none", len(services))
	}
	fi, err := os.Stat(hook)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("hook %s has mode %v, want an executable file", hook, fi.Mode())
	}
}
