package applytest

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// TestInterruptReadingStdin: objgc apply reading a model (or a
// --snapshot) from a standard input that never ends stops on the first
// SIGINT or SIGTERM, while it holds the lock: exit 130, nothing written,
// no journal.
func TestInterruptReadingStdin(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, args := range [][]string{{"-"}, {"--snapshot", "-", "--graph", "m.json"}} {
			e := newEnv(t)
			e.copyPair("app-removed.json")
			installHooks(t, e.hooks, e.readFile("m.json"), traceHook(t))
			c, stdout, stderr := e.command(append([]string{"apply", "--hooks-dir", e.hooks, "--write", "out.json"}, args...)...)
			in, err := c.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close() // never written: a reader that waits
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 30*time.Second, "the lock of out.json", func() bool { return flockHeld(e.path("out.json.lock")) })
			signal(t, c, sig)
			r := e.wait(c, stdout, stderr, 30*time.Second) // a hang fails, no measurement
			what := sig.String() + " " + strings.Join(args, " ")
			if r.code != 130 || !strings.Contains(r.stderr, "interrupted") {
				t.Errorf("%s: want exit 130 saying interrupted, got %s", what, r)
			}
			for _, name := range []string{"out.json", "out.json.journal"} {
				if _, err := os.Stat(e.path(name)); err == nil {
					t.Errorf("%s: %s was made", what, name)
				}
			}
			if len(e.trace()) > 0 {
				t.Errorf("%s: hooks ran: %q", what, e.trace())
			}
		}
	}
}

// flockHeld reports whether some process holds the flock(2) on the lock
// file at path, as apply does on <target>.lock: an exclusive lock cannot
// be taken without waiting. A missing file is held by nobody.
func flockHeld(path string) bool {
	fl := flock.New(path, flock.SetFlag(os.O_RDONLY))
	ok, err := fl.TryLock()
	if err != nil {
		return false
	}
	if ok {
		fl.Unlock()
	}
	return !ok
}
