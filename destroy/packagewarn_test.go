package destroy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/internal/plantest"
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
	p := plantest.Plan(t, `{"?": {"id": "env", "type": "io.murano.Environment@io.murano"}, "apps": [
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
		if w.Code != order.WarnPackageMissing || w.ID != want.id || w.Path != want.path || !strings.HasPrefix(w.Message, want.text) {
			t.Errorf("warning %d: %+v\nwant id %s, path %s, message starting %q", i, w, want.id, want.path, want.text)
		}
		if !strings.Contains(w.Message, "class hierarchy is the class alone") || !strings.Contains(w.Message, "package's hooks do not run") {
			t.Errorf("warning %d does not say what is lost: %s", i, w.Message)
		}
	}
}

// TestHierarchyIncompleteWarning: a cached package whose class file was
// damaged after it was installed (it no longer parses; cache verify would
// report it): the hierarchy stops at the class, and the plan says so once
// (hierarchy_incomplete), counting the objects and types and naming the
// error, instead of saying nothing.
func TestHierarchyIncompleteWarning(t *testing.T) {
	ctx := context.Background()
	c, err := pkgcache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pkg := t.TempDir()
	for name, text := range map[string]string{
		"manifest.yaml":    "Format: 1.3\nType: Application\nFullName: com.example.Web\nName: Web\nVersion: 1.0.0\nClasses:\n  com.example.Web: Web.yaml\n",
		"Classes/Web.yaml": "Name: Web\nExtends: []\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(pkg, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := c.Add(ctx, pkg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(res.Entry.Dir, "Classes", "Web.yaml"), []byte("Name: Web\nExtends: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := plantest.Plan(t, `{"?": {"id": "env", "type": "io.murano.Environment"}, "apps": [
		{"?": {"id": "web1", "type": "com.example.Web@com.example.Web"}},
		{"?": {"id": "web2", "type": "com.example.Web/1.0.0@com.example.Web"}},
		{"?": {"id": "other", "type": "com.example.Other"}}]}`,
		`{"?": {"id": "env", "type": "io.murano.Environment"}}`)
	s := c.NewSession()
	defer s.Close()
	got := PackageWarnings(ctx, p, &HookFinder{Packages: s})
	if len(got) != 1 {
		t.Fatalf("want 1 warning, got %+v", got)
	}
	w := got[0]
	want := "the package cache could not give the class hierarchy of 2 doomed objects of 2 types (com.example.Web/1.0.0@com.example.Web, com.example.Web@com.example.Web): "
	if w.Code != order.WarnHierarchyIncomplete || w.ID != "web1" || w.Path != "$.apps[0]" || !strings.HasPrefix(w.Message, want) ||
		!strings.Contains(w.Message, "Web.yaml") || !strings.Contains(w.Message, "class hierarchy is the class alone") {
		t.Errorf("warning %+v\nwant id web1, path $.apps[0], a message starting %q naming the class file", w, want)
	}
}
