package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// throwAwayUID is the user the test runs objgc as: nobody.
const throwAwayUID = 65534

// TestRefusalAsThrowAwayUser: run as a throw-away user (nobody), objgc
// plan --detailed-exitcode says 1 exactly when apply of the saved plan
// refuses it, where only the kernel knows that a hook cannot run for that
// user: a class folder or the hooks dir it may not search, a hook whose
// execute bits are its group's and others' but not its owner's, and
// root's hook that others may read but not execute. The mode bits alone
// say every one of these hooks can run. objgc is a real process (this
// test binary run as "objgc", see TestMain). Needs root, which CI has.
func TestRefusalAsThrowAwayUser(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI runs the tests as root, to run objgc as a throw-away user")
		}
		t.Skip("needs root to run objgc as a throw-away user")
	}
	base, err := os.MkdirTemp("", "objgc-user-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "objgc")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	model, err := os.ReadFile(filepath.Join("testdata", "pairs", "app-removed.json"))
	if err != nil {
		t.Fatal(err)
	}
	const petClinic = "io.murano.apps.java.PetClinic"
	classes := []string{"io.murano.resources.LinuxMuranoInstance", "io.murano.databases.MySql", petClinic}
	for _, tc := range []struct {
		name    string
		change  func(t *testing.T, ws string)
		refused bool
	}{
		{"runnable", func(*testing.T, string) {}, false},
		{"class folder not searchable", func(t *testing.T, ws string) {
			chmod(t, filepath.Join(ws, "hooks", petClinic), 0o700, 0)
		}, true},
		{"hooks dir not searchable", func(t *testing.T, ws string) {
			chmod(t, filepath.Join(ws, "hooks"), 0o600, throwAwayUID)
		}, true},
		{"execute bits not the owner's", func(t *testing.T, ws string) {
			chmod(t, filepath.Join(ws, "hooks", petClinic, "destroy"), 0o655, throwAwayUID)
		}, true},
		{"root's hook others may not execute", func(t *testing.T, ws string) {
			chmod(t, filepath.Join(ws, "hooks", petClinic, "destroy"), 0o744, 0)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := filepath.Join(base, filepath.Base(t.Name()))
			for _, class := range classes {
				if err := os.MkdirAll(filepath.Join(ws, "hooks", class), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(ws, "hooks", class, "destroy"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(ws, "m.json"), model, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := filepath.Walk(ws, func(p string, _ os.FileInfo, err error) error {
				if err != nil {
					return err
				}
				return os.Lchown(p, throwAwayUID, throwAwayUID)
			}); err != nil {
				t.Fatal(err)
			}
			tc.change(t, ws)
			run := func(args ...string) (int, string) {
				c := exec.Command(bin, args...)
				c.Dir = ws
				c.Env = append(os.Environ(), "HOME="+ws, "OBJGC_CACHE_DIR="+filepath.Join(ws, "cache"), "OBJGC_HOOKS_DIR=", "GOCOVERDIR=")
				c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: throwAwayUID, Gid: throwAwayUID}}
				out, err := c.CombinedOutput()
				var ee *exec.ExitError
				switch {
				case err == nil:
					return 0, string(out)
				case errors.As(err, &ee):
					return ee.ExitCode(), string(out)
				}
				t.Fatal(err)
				return -1, ""
			}
			planCode, planOut := run("plan", "--detailed-exitcode", "--hooks-dir", "hooks", "--out", "plan.json", "m.json")
			want := 2
			if tc.refused {
				want = 1
			}
			if planCode != want {
				t.Fatalf("plan: exit %d, want %d:\n%s", planCode, want, planOut)
			}
			applyCode, applyOut := run("apply", "plan.json")
			if (applyCode == 1) != tc.refused || !tc.refused && applyCode != 0 {
				t.Fatalf("plan exited %d, and apply of its plan %d:\n%s", planCode, applyCode, applyOut)
			}
			if tc.refused {
				if now, _ := os.ReadFile(filepath.Join(ws, "m.json")); string(now) != string(model) {
					t.Error("a refused apply changed the model")
				}
				if _, err := os.Lstat(filepath.Join(ws, "m.json.lock")); err == nil {
					t.Error("a refused apply made the lock file")
				}
			}
		})
	}
}

// chmod sets path's mode and owner (uid, its group the same).
func chmod(t *testing.T, path string, mode os.FileMode, uid int) {
	t.Helper()
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
