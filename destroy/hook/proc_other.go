//go:build !unix

package hook

import (
	"os"
	"os/exec"
)

// Without process groups (Windows) only the hook's own process is
// signalled, and it is killed outright: there is no SIGTERM to send.

func setProcessGroup(cmd *exec.Cmd) {}

func terminateGroup(pid int) error { return killGroup(pid) }

func killGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	if err := p.Kill(); err != nil && err != os.ErrProcessDone {
		return err
	}
	return nil
}

func groupAlive(pid int) bool { return false }

func exitSignal(ps *os.ProcessState) string { return "" }
