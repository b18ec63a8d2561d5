package cmd_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/objgc/objgc/cmd"
)

// run calls cmd.Run in-process with args and stdin and returns the exit
// status, stdout and stderr. The user's configuration directory and
// OBJGC_* variables are kept out.
func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cmd.Run(context.Background(), cmd.BuildInfo{Version: "test"}, args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// isolate keeps the environment and the user's configuration out of a test.
func isolate(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("HOME", dir)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OBJGC_") || k == "NO_COLOR" {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

const pairs = "../testdata/pairs/"
