//go:build unix

package hook

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExampleHook runs the hook docs/hooks.md walks through, on the
// instance of murano-apps' Tomcat test environment
// (../shared/models/murano_apps/Tomcat_tomcat-for-mock.json).
func TestExampleHook(t *testing.T) {
	dirs := []string{filepath.Join("..", "..", "testdata", "hooks", "example")}
	classes := []string{"io.murano.resources.LinuxMuranoInstance", "io.murano.resources.Instance", "io.murano.Object"}
	found := Find(dirs, classes)
	if len(found) != 1 || found[0].Err != nil {
		t.Fatalf("Find = %+v, want the example hook", found)
	}
	f := found[0]

	const id, owner = "13e3c264-f002-4958-a619-94d13d7fa3f5", "312534e2-f1aa-4ed3-811c-7f5c10530484"
	doomed := filepath.Join(t.TempDir(), "doomed")
	if err := os.WriteFile(doomed, []byte(owner+"\n"+id+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ownerID := owner
	doc, err := Document{Event: EventDestroy, OwnerID: &ownerID, Object: json.RawMessage(`{
		"availabilityZone": "nova",
		"name": "cnxubigthiddg2",
		"assignFloatingIp": false,
		"keyname": "kate",
		"flavor": "m1.medium",
		"image": "283aa37f-d18a-48fc-b94e-c0721dbcf059",
		"?": {"type": "io.murano.resources.LinuxMuranoInstance", "id": "13e3c264-f002-4958-a619-94d13d7fa3f5"}
	}`)}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	res, err := Run(context.Background(), Invocation{
		Hook:       f.Path,
		ObjectID:   id,
		ObjectType: "io.murano.resources.LinuxMuranoInstance",
		Class:      f.Class,
		Group:      1,
		Doomed:     doomed,
		Dir:        f.WorkDir(),
		Stdin:      doc,
		Env:        os.Environ(),
		Stderr:     func(l string) { lines = append(lines, l) },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"destroying instance cnxubigthiddg2 (" + id + ", io.murano.resources.LinuxMuranoInstance), group 1",
		"owner " + owner + " is destroyed in this run too",
		"instance cnxubigthiddg2 is gone",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("stderr:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if len(res.Stdout) != 0 || res.Output != nil {
		t.Errorf("stdout = %q, want empty", res.Stdout)
	}
}

// TestExampleHookInDocs keeps the copy in docs/hooks.md the same as the
// hook that TestExampleHook runs, from "set -eu" on.
func TestExampleHookInDocs(t *testing.T) {
	hook, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hooks", "example", "io.murano.resources.LinuxMuranoInstance", "destroy"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "hooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(hook), "\nset -eu\n")
	if !ok {
		t.Fatal("example hook has no set -eu line")
	}
	if !strings.Contains(string(docs), "```sh\n#!/bin/sh\nset -eu\n"+body+"```\n") {
		t.Error("docs/hooks.md does not show the example hook as in testdata (from set -eu on)")
	}
}
