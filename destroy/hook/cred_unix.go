//go:build unix

package hook

import (
	"os/exec"
	"syscall"
)

// setUser makes the hook's process run as u (setgroups, setgid, setuid
// in the child, before execve): nothing of objgc's privileges is left
// to it. cmd.SysProcAttr must be set (setProcessGroup).
func setUser(cmd *exec.Cmd, u *User) {
	groups := make([]uint32, len(u.Groups))
	for i, g := range u.Groups {
		groups[i] = uint32(g)
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(u.UID), Gid: uint32(u.GID), Groups: groups}
}
