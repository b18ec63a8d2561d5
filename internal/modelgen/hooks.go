package modelgen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// HookClass is the class of the objects WriteHookBench makes doomed; its
// destroy hook is HookClass's directory under the hooks directory.
const HookClass = "bench.Obj"

// WriteHookBench writes, in dir, the setup that compares apply's hook
// runner with xargs: model.json, an envelope whose snapshot holds n objects
// of class bench.Obj under the environment and whose incoming model holds
// none (one group of n doomed objects, no notifications); hooks/bench.Obj/
// destroy, a no-op shell script; and ids.txt, the n ids a line each, for
// `xargs -P 8 -n 1 hooks/bench.Obj/destroy < ids.txt`. It returns the
// three paths.
func WriteHookBench(dir string, n int) (model, hook, ids string, err error) {
	var m, l bytes.Buffer
	m.WriteString(`{"Objects": {"?": {"id": "bench-env", "type": "bench.Env"}, "services": []},` + "\n")
	m.WriteString(`"ObjectsCopy": {"?": {"id": "bench-env", "type": "bench.Env"}, "services": [` + "\n")
	for i := range n {
		if i > 0 {
			m.WriteString(",\n")
		}
		id := fmt.Sprintf("bench-obj-%06d", i)
		fmt.Fprintf(&m, `  {"?": {"id": %q, "type": "%s/1.0.0@bench"}, "name": "object %d"}`, id, HookClass, i)
		l.WriteString(id + "\n")
	}
	m.WriteString("\n]},\n\"Attributes\": []}\n")

	model = filepath.Join(dir, "model.json")
	hook = filepath.Join(dir, "hooks", HookClass, "destroy")
	ids = filepath.Join(dir, "ids.txt")
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		return "", "", "", err
	}
	files := []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{model, m.Bytes(), 0o644},
		{hook, []byte("#!/bin/sh\nexit 0\n"), 0o755},
		{ids, l.Bytes(), 0o644},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			return "", "", "", err
		}
	}
	return model, hook, ids, nil
}
