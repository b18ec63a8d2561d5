package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/objgc/objgc/internal/gendocs"
)

// TestManPagesUpToDate fails when docs/man is stale: run go generate
// ./cmd. The pages are made with the date the committed ones carry, so
// that only their content is compared.
func TestManPagesUpToDate(t *testing.T) {
	man := filepath.Join("..", "..", "docs", "man")
	data, err := os.ReadFile(filepath.Join(man, "objgc.1"))
	if err != nil {
		t.Fatal(err)
	}
	date, err := gendocs.PageDate(data, "objgc")
	if err != nil {
		t.Fatalf("docs/man/objgc.1: %v", err)
	}
	dir := t.TempDir()
	if err := writeManPages(dir, date); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	committed, _ := filepath.Glob(filepath.Join(man, "*.1"))
	if len(committed) != len(entries) {
		t.Errorf("docs/man has %d pages, the commands make %d: run go generate ./cmd", len(committed), len(entries))
	}
	for _, e := range entries {
		got, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		want, err := os.ReadFile(filepath.Join(man, e.Name()))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("docs/man/%s is stale: run go generate ./cmd", e.Name())
		}
	}
}
