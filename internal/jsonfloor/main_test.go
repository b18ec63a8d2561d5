package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(good, []byte(`{"Objects": {"?": {"id": "a", "type": "t"}}}`), 0o644)
	os.WriteFile(bad, []byte(`{"Objects": `), 0o644)
	cases := []struct {
		mode   string
		names  []string
		status int
		out    string
	}{
		{"valid", []string{good}, 0, good + ": 44 bytes, valid JSON\n"},
		{"valid", []string{good, bad}, 1, good + ": 44 bytes, valid JSON\n"},
		{"read", []string{bad}, 0, bad + ": 12 bytes read\n"},
		{"read", []string{filepath.Join(dir, "missing")}, 1, ""},
		{"walk", []string{good}, 2, ""},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		status := run(c.mode, c.names, &stdout, &stderr)
		if status != c.status || stdout.String() != c.out {
			t.Errorf("run(%s, %v) = %d, stdout %q; want %d, %q", c.mode, c.names, status, stdout.String(), c.status, c.out)
		}
		if (status != 0) != (stderr.Len() > 0) {
			t.Errorf("run(%s, %v): status %d with stderr %q", c.mode, c.names, status, strings.TrimSpace(stderr.String()))
		}
	}
}
