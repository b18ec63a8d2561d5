package cmd

import (
	"encoding/json"
	"github.com/objgc/objgc/destroy/order"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApplyReportWarnsOfMissingPackage applies a model whose types name
// Murano's real core library (cached, with a destroy hook for an ancestor
// class) and a package the cache does not hold: the JSON and text reports
// carry one package_missing warning for the missing package, counting
// both of its objects, and none for the package that is there.
func TestApplyReportWarnsOfMissingPackage(t *testing.T) {
	cacheCoreLibrary(t)
	t.Setenv("NO_COLOR", "1")

	model := `{"Objects": {"?": {"id": "env", "type": "io.murano.Environment@io.murano"}, "apps": []},
 "ObjectsCopy": {"?": {"id": "env", "type": "io.murano.Environment@io.murano"}, "apps": [
  {"?": {"id": "vm1", "type": "io.murano.resources.LinuxMuranoInstance@io.murano"}},
  {"?": {"id": "tc1", "type": "com.example.apache.Tomcat@com.example.apache.Tomcat"}},
  {"?": {"id": "tc2", "type": "com.example.apache.Tomcat@com.example.apache.Tomcat"}}]}}`
	dir := t.TempDir()
	for _, name := range []string{"a.json", "b.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(model), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	code, stdout, stderr := runCmd(t, "", "apply", "--format", "json", filepath.Join(dir, "a.json"))
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var rep struct {
		Objects []struct {
			ID    string `json:"id"`
			Hooks []struct {
				Hook string `json:"path"`
			} `json:"hooks"`
		} `json:"objects"`
		Warnings []order.Warning `json:"warnings"`
		Summary  struct {
			Warnings int `json:"warnings"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout)
	}
	if len(rep.Warnings) != 1 || rep.Summary.Warnings != 1 {
		t.Fatalf("want one warning, got %+v (summary %d)", rep.Warnings, rep.Summary.Warnings)
	}
	w := rep.Warnings[0]
	if w.Code != order.WarnPackageMissing || w.ID != "tc1" || w.Path != "$.ObjectsCopy.apps[1]" {
		t.Errorf("warning %+v", w)
	}
	for _, part := range []string{"package com.example.apache.Tomcat is not in the package cache", "2 doomed objects of 1 type", "class hierarchy", "hooks do not run"} {
		if !strings.Contains(w.Message, part) {
			t.Errorf("message %q lacks %q", w.Message, part)
		}
	}
	hooked := false
	for _, o := range rep.Objects {
		if o.ID == "vm1" && len(o.Hooks) == 1 && strings.HasSuffix(o.Hooks[0].Hook, filepath.Join("hooks", "io.murano.resources.Instance", "destroy")) {
			hooked = true
		}
	}
	if !hooked {
		t.Errorf("vm1 was not destroyed by the cached package's hook: %s", stdout)
	}

	code, stdout, stderr = runCmd(t, "", "apply", filepath.Join(dir, "b.json"))
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if n := strings.Count(stdout, "warning: package_missing: package com.example.apache.Tomcat is not in the package cache"); n != 1 {
		t.Errorf("text report has %d package_missing warnings, want 1:\n%s", n, stdout)
	}
	if strings.Contains(stdout, "package io.murano") {
		t.Errorf("text report warns of the cached io.murano:\n%s", stdout)
	}
}
