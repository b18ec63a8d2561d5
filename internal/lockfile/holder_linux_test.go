package lockfile

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestHolderPID: a classic POSIX lock, as Python's fcntl.lockf takes it
// (murano-engine's), names its process; an open-file-description lock
// (objgc's) names none; no lock, nobody.
func TestHolderPID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x_usage.lock")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if pid := HolderPID(path); pid != 0 {
		t.Fatalf("no lock: holder %d, want 0", pid)
	}
	unlock, err := TryLockPath(path, Shared)
	if err != nil || unlock == nil {
		t.Fatalf("TryLockPath: %v", err)
	}
	if pid := HolderPID(path); pid != -1 {
		t.Errorf("an open-file-description lock: holder %d, want -1", pid)
	}
	unlock()

	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to take fcntl.lockf's lock")
	}
	cmd := exec.Command(python, "-c", `import fcntl, sys
f = open(sys.argv[1], "r")
fcntl.lockf(f, fcntl.LOCK_SH)
print("locked", flush=True)
sys.stdin.read()`, path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
		t.Fatalf("python said %q", line)
	}
	if pid := HolderPID(path); pid != cmd.Process.Pid {
		t.Errorf("fcntl.lockf's lock of pid %d: holder %d", cmd.Process.Pid, pid)
	}
}
