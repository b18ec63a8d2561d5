//go:build unix

package hook

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExampleHook runs the hook docs/hooks.md walks through, on the instance
// of murano-apps' Tomcat test environment (a copy of murano-apps' file in
// testdata/models/Tomcat_tomcat-for-mock.json; testdata/models/README.md
// gives its origin).
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

// TestExampleNotifyHook runs the notify hook docs/hooks.md shows, for
// the region and network of testdata/pairs/region-removed-handlers.json:
// it checks its argv, and patches the region only while the region still
// refers to the network by id.
func TestExampleNotifyHook(t *testing.T) {
	dirs := []string{filepath.Join("..", "..", "testdata", "hooks", "example")}
	classes := []string{"io.murano.CloudRegion", "io.murano.Object"}
	f, ok := FindHandler(dirs, classes, "onNetworkDestroyed")
	if !ok || f.Err != nil || f.Class != "io.murano.CloudRegion" {
		t.Fatalf("FindHandler = %+v, %v; want the example hook", f, ok)
	}
	const network, region = "72d2c13c600247c98e09e2e3c1cd9d70", "f8cb28d147914850978edb35eca156e1"
	object := json.RawMessage(`{"name": "new_env-network", "regionName": "RegionTwo",
		"?": {"type": "io.murano.resources.NeutronNetwork/0.0.0@io.murano", "id": "` + network + `"}}`)
	for _, tc := range []struct {
		name, environment string
		wantPatch         string
		wantLog           []string
	}{
		{name: "reference", environment: `"` + network + `"`, wantPatch: `{"defaultNetworks": {"environment": null}}`,
			wantLog: []string{"region " + region + ": network " + network + " is being destroyed", "region " + region + " forgets network " + network}},
		{name: "another network", environment: `{"?": {"id": "other", "type": "io.murano.resources.NeutronNetwork"}}`,
			wantLog: []string{"region " + region + ": network " + network + " is being destroyed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owner := region
			doc, err := Document{Event: EventNotify, OwnerID: &owner, Object: object,
				Subscriber: json.RawMessage(`{"name": "RegionTwo", "defaultNetworks": {"environment": ` + tc.environment + `, "flat": null},
					"?": {"type": "io.murano.CloudRegion/0.0.0@io.murano", "id": "` + region + `"}}`)}.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			res, err := Run(context.Background(), Invocation{
				Hook: f.Path, ObjectID: network, ObjectType: "io.murano.resources.NeutronNetwork/0.0.0@io.murano",
				Class: f.Class, Handler: "onNetworkDestroyed", SubscriberID: region, Group: 2,
				Dir: f.WorkDir(), Stdin: doc, Env: os.Environ(),
				Stderr: func(l string) { lines = append(lines, l) },
			})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Patch) != tc.wantPatch {
				t.Errorf("patch = %s, want %s", res.Patch, tc.wantPatch)
			}
			if strings.Join(lines, "\n") != strings.Join(tc.wantLog, "\n") {
				t.Errorf("stderr:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(tc.wantLog, "\n"))
			}
		})
	}
	// The hook refuses the argv of the old layout, [hook, handler, id].
	cmd := exec.Command(f.Path, "onNetworkDestroyed", network)
	cmd.Stdin = strings.NewReader("{}")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "usage: onNetworkDestroyed notify onNetworkDestroyed NETWORK-ID") {
		t.Errorf("old argv: %v, output %q; want exit status 2", err, out)
	}
}

// TestExampleHookInDocs keeps the copies in docs/hooks.md the same as the
// hooks that TestExampleHook and TestExampleNotifyHook run, from "set -eu"
// on.
func TestExampleHookInDocs(t *testing.T) {
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "hooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{
		"io.murano.resources.LinuxMuranoInstance/destroy",
		"io.murano.CloudRegion/notify/onNetworkDestroyed",
	} {
		hook, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hooks", "example", filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		_, body, ok := strings.Cut(string(hook), "\nset -eu\n")
		if !ok {
			t.Fatalf("example hook %s has no set -eu line", rel)
		}
		if !strings.Contains(string(docs), "```sh\n#!/bin/sh\nset -eu\n"+body+"```\n") {
			t.Errorf("docs/hooks.md does not show the example hook %s as in testdata (from set -eu on)", rel)
		}
	}
}
