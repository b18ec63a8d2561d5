package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/objgc/objgc/cmd"
)

// TestApplyNothingToDoKeepsModel: an apply with nothing doomed and
// nothing dropped leaves the model's bytes and mtime alone and makes no
// journal; the lock file is made (the run still takes the lock).
func TestApplyNothingToDoKeepsModel(t *testing.T) {
	isolate(t)
	data, err := os.ReadFile(pairs + "app-moved.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	model := filepath.Join(dir, "m.json")
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.Chtimes(model, old, old); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "", "apply", model)
	if code != cmd.ExitOK || !strings.Contains(stdout, "nothing to do: "+model+" left as it was\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	st, err := os.Stat(model)
	if err != nil {
		t.Fatal(err)
	}
	if !st.ModTime().Equal(old) {
		t.Errorf("mtime %v, want %v", st.ModTime(), old)
	}
	if got, _ := os.ReadFile(model); string(got) != string(data) {
		t.Errorf("the model's bytes changed")
	}
	if _, err := os.Stat(model + ".journal"); !os.IsNotExist(err) {
		t.Errorf("journal: %v", err)
	}
	if _, err := os.Stat(model + ".lock"); err != nil {
		t.Errorf("the lock was not taken: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("files left: %v", entries)
	}
}
