package destroy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/objgc/objgc/pkgcache"
)

// TestPackageWarnings plans a model whose types name packages against a
// real cache holding Murano's real core library: a package the cache does
// not hold (at all, or at the version named) gets one package_missing
// warning however many objects name it; io.murano itself, and a class
// io.murano does not define, get none; without a cache there is nothing
// to warn of.
func TestPackageWarnings(t *testing.T) {
	src := filepath.Join("..", "pkgcache", "testdata", "packages", "io.murano")
	if _, err := os.Stat(filepath.Join(src, "manifest.yaml")); err != nil {
		t.Fatalf("the core library fixture is missing: %v", err)
	}
	ctx := context.Background()
	c, err := pkgcache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Add(ctx, src); err != nil {
		t.Fatal(err)
	}
	p := planJSON(t, `{"?": {"id": "env", "type": "io.murano.Environment@io.murano"}, "apps": [
		{"?": {"id": "vm", "type": "io.murano.resources.LinuxMuranoInstance@io.murano"}},
		{"?": {"id": "odd", "type": "io.murano.NoSuchClass@io.murano"}},
		{"?": {"id": "old", "type": "io.murano.Environment/9.9@io.murano"}},
		{"?": {"id": "t1", "type": "com.example.Tomcat@com.example.Tomcat"}},
		{"?": {"id": "t2", "type": "com.example.Tomcat@com.example.Tomcat"}},
		{"?": {"id": "t3", "type": "com.example.TomcatAgent@com.example.Tomcat"}},
		{"?": {"id": "loose", "type": "com.example.Loose"}}]}`,
		`{"?": {"id": "env", "type": "io.murano.Environment@io.murano"}}`)

	if w := PackageWarnings(ctx, p, &HookFinder{}); w != nil {
		t.Errorf("without a cache: %+v", w)
	}
	s := c.NewSession()
	defer s.Close()
	got := PackageWarnings(ctx, p, &HookFinder{Packages: s})
	if len(got) != 2 {
		t.Fatalf("want 2 warnings, got %+v", got)
	}
	for i, want := range []struct{ id, path, text string }{
		{"old", "$.apps[2]", "package io.murano version 9.9 is not in the package cache: 1 doomed object of 1 type (io.murano.Environment/9.9@io.murano) names it;"},
		{"t1", "$.apps[3]", "package com.example.Tomcat is not in the package cache: 3 doomed objects of 2 types (com.example.Tomcat@com.example.Tomcat, com.example.TomcatAgent@com.example.Tomcat) name it;"},
	} {
		w := got[i]
		if w.Code != WarnPackageMissing || w.ID != want.id || w.Path != want.path || !strings.HasPrefix(w.Message, want.text) {
			t.Errorf("warning %d: %+v\nwant id %s, path %s, message starting %q", i, w, want.id, want.path, want.text)
		}
		if !strings.Contains(w.Message, "class hierarchy is the class alone") || !strings.Contains(w.Message, "package's hooks do not run") {
			t.Errorf("warning %d does not say what is lost: %s", i, w.Message)
		}
	}
}
