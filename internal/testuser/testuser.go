// Package testuser gives tests a throw-away user, so that what root does
// on another user's files is tested with a real user and real ownership.
package testuser

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"testing"
)

// Throwaway creates a system user with a group of its own (useradd) for
// one test and deletes it when the test ends, returning its name, uid and
// gid. It needs root and useradd: elsewhere the test is skipped, saying
// that what was not tested, except under CI=true (.ci/run runs as root),
// where that is a failure.
func Throwaway(t testing.TB, what string) (name string, uid, gid int) {
	t.Helper()
	_, err := exec.LookPath("useradd")
	if os.Geteuid() != 0 || err != nil {
		msg := "needs root and useradd to create a throw-away user: " + what + " was not tested"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	var b [4]byte
	rand.Read(b[:])
	name = "objgct" + hex.EncodeToString(b[:])
	if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v\n%s", name, err, out)
	}
	t.Cleanup(func() { exec.Command("userdel", name).Run() })
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return name, uid, gid
}
