//go:build unix

package hook

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRunFIFOHook: a named pipe where the hook should be is refused
// without blocking on its opening.
func TestRunFIFOHook(t *testing.T) {
	dir := t.TempDir()
	hook := filepath.Join(dir, "destroy")
	if err := syscall.Mkfifo(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := run(t, Invocation{Hook: hook, SHA256: "00"}, "")
	var he *HookError
	if !errors.As(err, &he) || he.Reason != "not a regular file" {
		t.Fatalf("err = %v, want not a regular file", err)
	}
}
