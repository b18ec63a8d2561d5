//go:build unix

package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/objgc/objgc/cmd"
)

// TestConfigOwnedByAnotherUser: a configuration file that belongs to
// neither the user running objgc nor root is refused, naming the owner.
// Only root can give a file away, so only root runs it.
func TestConfigOwnedByAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can make a file owned by another user")
	}
	isolate(t)
	model, err := filepath.Abs(pairs + "app-removed.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("objgc.yaml", []byte("plan:\n  format: json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown("objgc.yaml", 65534, 65534); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "", "plan", model)
	want := "objgc: objgc.yaml: not used: owned by uid 65534, not by you (uid 0) or root; run chown 0 objgc.yaml\n"
	if code != cmd.ExitError || stdout != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, want)
	}
	// Root's own file, and a link to it, are read.
	if err := os.Chown("objgc.yaml", 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("objgc.yaml", "link.yaml"); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, "", "plan", "--config", "link.yaml", model)
	if code != cmd.ExitOK || !strings.HasPrefix(stdout, "{\n") {
		t.Errorf("exit %d, stdout %.40q, stderr %q", code, stdout, stderr)
	}
}

// TestConfigFIFO: a named pipe where the configuration file is looked for
// is an error, at once: objgc does not wait for a writer.
func TestConfigFIFO(t *testing.T) {
	isolate(t)
	model, err := filepath.Abs(pairs + "app-removed.json")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	if err := syscall.Mkfifo("objgc.yaml", 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "", "plan", model)
	want := "objgc: objgc.yaml: not used: not a regular file (named pipe)\n"
	if code != cmd.ExitError || stdout != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, want)
	}
}
