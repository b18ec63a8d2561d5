package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestApplyJSONExampleInDocs runs the apply that docs/apply.md's JSON
// example describes (a destroy hook failing, the object it blocks, a
// notification hook and a handler without one) and compares its report
// with the example byte for byte, with the hooks dir written as
// /etc/objgc/hooks and durations as 0: a change of the report's layout
// shows here until the page follows.
func TestApplyJSONExampleInDocs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("docs", "apply.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "### JSON (`--format json`)\n\n```json\n")
	if !ok {
		t.Fatal("docs/apply.md: no JSON example under \"### JSON (`--format json`)\"")
	}
	example, _, _ := strings.Cut(after, "```\n")
	example = regexp.MustCompile(`"duration_ms": *[0-9]+`).ReplaceAllString(example, `"duration_ms": 0`)
	model, err := os.ReadFile(filepath.Join("testdata", "pairs", "region-removed-handlers.json"))
	if err != nil {
		t.Fatal(err)
	}
	script := `chmod 755 hooks/io.murano.resources.NeutronNetwork/destroy
chmod 755 hooks/io.murano.Environment/notify/onRegionRemoved
exec sh -c 'objgc apply --hooks-dir "$WORK/hooks" --format json model.json >report.json; test $? -eq 3'
exec sh -c 'sed -e "s#$WORK/hooks#/etc/objgc/hooks#g" -e "s/\"duration_ms\": *[0-9]*/\"duration_ms\": 0/" report.json'
cmp stdout example.json
`
	archive := "-- hooks/io.murano.resources.NeutronNetwork/destroy --\n#!/bin/sh\necho 'network still has ports' >&2\nexit 3\n" +
		"-- hooks/io.murano.Environment/notify/onRegionRemoved --\n#!/bin/sh\nexit 0\n" +
		"-- model.json --\n" + string(model) +
		"-- example.json --\n" + example
	runScript(t, script, archive)
}
