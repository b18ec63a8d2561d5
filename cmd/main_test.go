package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain keeps the developer's settings out of the package's tests: no
// OBJGC_* variable, and a home, configuration and cache directory of the
// test run's own, so that <user config dir>/objgc/config.yaml or a
// default package cache cannot change a plan a test compares.
//
// With OBJGC_TEST_CMD_RUN=1 the test binary is objgc (cmd.Main on its
// arguments), for a test that runs it as a process of its own: as
// another user, with its stderr a given file.
func TestMain(m *testing.M) {
	if os.Getenv("OBJGC_TEST_CMD_RUN") == "1" {
		os.Exit(Main(BuildInfo{Version: "test"}, nil))
	}
	home, err := os.MkdirTemp("", "objgc-cmd-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OBJGC_") {
			os.Unsetenv(k)
		}
	}
	os.Setenv("HOME", home)
	// Not the machine's /etc/objgc/config.yaml (an installed package's).
	os.Setenv(systemConfigEnv, filepath.Join(home, "etc-objgc-config.yaml"))
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// envWith is a Getenv for a run's IO: the test process's environment
// (TestMain's temporary HOME and system file) with set's variables in
// front of it, "" unsetting one.
func envWith(set map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := set[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
}
