//go:build !unix

package hook

import "os/exec"

// setUser does nothing without Unix users: no cache has another owner
// there (pkgcache).
func setUser(*exec.Cmd, *User) {}
