package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what Check and Watch report.
type recorder struct {
	testing.TB
	errors, logs []string
	cleanups     []func()
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return "TestX/sub" }
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

func setUpdate(t *testing.T, on bool) {
	old := *update
	*update = on
	t.Cleanup(func() { *update = old })
}

func TestCheckDiffers(t *testing.T) {
	setUpdate(t, false)
	path := filepath.Join(t.TempDir(), "plan.txt")
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Check(r, path, []byte("a\nB\nc\n"))
	if len(r.errors) != 1 {
		t.Fatalf("errors %q, want one", r.errors)
	}
	for _, want := range []string{"-b\n", "+B\n", "go test -run '^TestX$' -update -v"} {
		if !strings.Contains(r.errors[0], want) {
			t.Errorf("error %q does not show %q", r.errors[0], want)
		}
	}
	if data, _ := os.ReadFile(path); string(data) != "a\nb\nc\n" {
		t.Errorf("without -update the file became %q", data)
	}
	r = &recorder{TB: t}
	Check(r, path, []byte("a\nb\nc\n"))
	if len(r.errors)+len(r.logs) != 0 {
		t.Errorf("equal output reported %q %q", r.errors, r.logs)
	}
}

func TestCheckUpdate(t *testing.T) {
	setUpdate(t, true)
	path := filepath.Join(t.TempDir(), "new", "plan.txt")
	r := &recorder{TB: t}
	Check(r, path, []byte("one\n"))
	if data, err := os.ReadFile(path); err != nil || string(data) != "one\n" {
		t.Fatalf("created %q, %v", data, err)
	}
	if len(r.errors) != 0 || len(r.logs) != 1 || !strings.Contains(r.logs[0], "+one\n") {
		t.Errorf("creating: errors %q, logs %q", r.errors, r.logs)
	}
	r = &recorder{TB: t}
	Check(r, path, []byte("two\n"))
	if data, _ := os.ReadFile(path); string(data) != "two\n" {
		t.Errorf("rewrote %q", data)
	}
	if len(r.errors) != 0 || len(r.logs) != 1 || !strings.Contains(r.logs[0], "-one\n+two\n") {
		t.Errorf("rewriting: errors %q, logs %q", r.errors, r.logs)
	}
	r = &recorder{TB: t}
	Check(r, path, []byte("two\n"))
	if len(r.errors)+len(r.logs) != 0 {
		t.Errorf("an unchanged file reported %q %q", r.errors, r.logs)
	}
}

func TestWatch(t *testing.T) {
	dir := t.TempDir()
	same, changed := filepath.Join(dir, "same.txtar"), filepath.Join(dir, "changed.txtar")
	for _, p := range []string{same, changed} {
		if err := os.WriteFile(p, []byte("exec objgc\n-- want --\nold\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setUpdate(t, false)
	r := &recorder{TB: t}
	Watch(r, same, changed)
	if len(r.cleanups) != 0 {
		t.Errorf("without -update Watch registered %d cleanups", len(r.cleanups))
	}
	setUpdate(t, true)
	Watch(r, same, changed)
	if err := os.WriteFile(changed, []byte("exec objgc\n-- want --\nnew\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range r.cleanups {
		f()
	}
	if len(r.errors) != 0 || len(r.logs) != 1 || !strings.Contains(r.logs[0], "rewrote "+changed) || !strings.Contains(r.logs[0], "-old\n+new\n") {
		t.Errorf("errors %q, logs %q", r.errors, r.logs)
	}
}
