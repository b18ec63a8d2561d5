package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestApplyProgressLine: on a terminal, apply draws its progress line on
// stderr with carriage returns, prints hook log lines above it (erasing it
// first), and erases it at the end; on a pipe, stderr holds the log lines
// and no progress at all. Groups are named by their index, as the report,
// the plan and JUnit name them, with their place in destruction order.
func TestApplyProgressLine(t *testing.T) {
	t.Setenv("OBJGC_CACHE_DIR", t.TempDir())
	for _, tty := range []bool{true, false} {
		t.Run(map[bool]string{true: "terminal", false: "pipe"}[tty], func(t *testing.T) {
			dir, model := progressModel(t, "#!/bin/sh\necho \"deleting server $OBJGC_OBJECT_ID\" >&2\n")
			var out, errb bytes.Buffer
			streams := &IO{In: strings.NewReader(""), Out: &out, Err: &errb, IsTTYErr: tty, progress: &progressTiming{}, Getenv: envWith(map[string]string{"NO_COLOR": "", "TERM": ""})}
			args := []string{"apply", "--hooks-dir", filepath.Join(dir, "hooks"), model}
			if code := run(context.Background(), BuildInfo{}, args, streams); code != ExitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			stderr := errb.String()
			if !strings.Contains(stderr, "deleting server 76b9ca88-c668-4e37-a830-5845adc10b0e") {
				t.Errorf("stderr lacks the hook's log line:\n%q", stderr)
			}
			if !tty {
				if strings.ContainsAny(stderr, "\r\x1b") || strings.Contains(stderr, "objects done") {
					t.Errorf("progress on a pipe:\n%q", stderr)
				}
				return
			}
			for _, want := range []string{"\robjgc apply: group 2 (1 of 2), 0/3 objects done", "\robjgc apply: group 1 (2 of 2), 3/3 objects done", "objects done, 0 failed\x1b[K"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%q", want, stderr)
				}
			}
			// The log line starts on an erased line, and the run ends with
			// the progress line erased.
			logLine := "76b9ca88-c668-4e37-a830-5845adc10b0e destroy: deleting server"
			if n := strings.Count(stderr, logLine); n != 1 || strings.Count(stderr, "\r\x1b[K"+logLine) != n {
				t.Errorf("log line not printed once on an erased line:\n%q", stderr)
			}
			if !strings.HasSuffix(stderr, "\r\x1b[K") {
				t.Errorf("progress line not erased at the end:\n%q", stderr)
			}
		})
	}
}

// TestCachePruneProgressLine: a prune on a terminal shows its progress on
// stderr and erases it; its report on stdout is unchanged.
func TestCachePruneProgressLine(t *testing.T) {
	t.Parallel()
	cache := filepath.Join(t.TempDir(), "cache")
	pkgs := filepath.Join("..", "pkgcache", "testdata", "packages")
	streams := func() (*IO, *bytes.Buffer, *bytes.Buffer) {
		var out, errb bytes.Buffer
		return &IO{In: strings.NewReader(""), Out: &out, Err: &errb, IsTTYErr: true, progress: &progressTiming{}, Getenv: envWith(map[string]string{"NO_COLOR": "", "TERM": ""})}, &out, &errb
	}
	s, _, errb := streams()
	add := []string{"cache", "add", "--cache-dir", cache,
		filepath.Join(pkgs, "com.example.apache.ApacheHttpServer-0.0.0"), filepath.Join(pkgs, "com.example.apache.ApacheHttpServer-1.0.0")}
	if code := run(context.Background(), BuildInfo{}, add, s); code != ExitOK {
		t.Fatalf("add: exit %d: %s", code, errb)
	}
	s, out, errb := streams()
	if code := run(context.Background(), BuildInfo{}, []string{"cache", "prune", "--cache-dir", cache, "--outdated"}, s); code != ExitOK {
		t.Fatalf("prune: exit %d: %s", code, errb)
	}
	want := "\robjgc cache prune: 1/1 packages claimed, deleting the last ones\x1b[K\r\x1b[K"
	if errb.String() != want {
		t.Errorf("stderr = %q, want %q", errb, want)
	}
	if !strings.HasPrefix(out.String(), "removed com.example.apache.ApacheHttpServer 0.0.0 ") {
		t.Errorf("stdout = %q", out)
	}
}

// terminal is a fake terminal for stdout and stderr together, as a user
// sees them: it keeps the screen's lines, with a carriage return moving
// to the start of the line, ESC [ K erasing to its end, and other bytes
// written over what is there.
type terminal struct {
	mu    sync.Mutex
	lines [][]byte
	col   int
}

func (t *terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lines == nil {
		t.lines = [][]byte{nil}
	}
	for i := 0; i < len(p); i++ {
		cur := &t.lines[len(t.lines)-1]
		switch {
		case p[i] == '\r':
			t.col = 0
		case p[i] == '\n':
			t.lines = append(t.lines, nil)
			t.col = 0
		case bytes.HasPrefix(p[i:], []byte("\x1b[K")):
			*cur = (*cur)[:min(t.col, len(*cur))]
			i += 2
		default:
			if t.col < len(*cur) {
				(*cur)[t.col] = p[i]
			} else {
				*cur = append(*cur, p[i])
			}
			t.col++
		}
	}
	return len(p), nil
}

// screen returns the lines shown, the last one included when not empty.
func (t *terminal) screen() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for k, l := range t.lines {
		if k < len(t.lines)-1 || len(l) > 0 {
			out = append(out, string(l))
		}
	}
	return out
}

// TestApplyProgressLineClearedBeforeReport: on a terminal showing both
// stdout and stderr, the progress line is erased before the report and
// before the hooks' log lines, so that no line shows progress text mixed
// with another line, and none is left at the end.
func TestApplyProgressLineClearedBeforeReport(t *testing.T) {
	t.Setenv("OBJGC_CACHE_DIR", t.TempDir())
	dir, model := progressModel(t, "#!/bin/sh\necho \"deleting server\" >&2\n")
	term := &terminal{}
	streams := &IO{In: strings.NewReader(""), Out: term, Err: term, IsTTYOut: true, IsTTYErr: true, progress: &progressTiming{},
		Getenv: envWith(map[string]string{"NO_COLOR": "1"})}
	args := []string{"apply", "--hooks-dir", filepath.Join(dir, "hooks"), model}
	if code := run(context.Background(), BuildInfo{}, args, streams); code != ExitOK {
		t.Fatalf("exit %d: %q", code, term.screen())
	}
	want := []string{
		"76b9ca88-c668-4e37-a830-5845adc10b0e destroy: deleting server",
		"destroyed io.murano.resources.LinuxMuranoInstance 76b9ca88-c668-4e37-a830-5845adc10b0e (group 2, 1 hook)",
		"destroyed io.murano.databases.MySql 769af50c-9629-4694-b623-e9b392941279 (group 1, no destroy hook)",
		"destroyed io.murano.apps.java.PetClinic fda74653-8b66-42e2-be16-12ebc87d7570 (group 1, no destroy hook)",
		"3 destroyed, 0 failed, 0 blocked, 2 destroyed without a hook; wrote " + model,
	}
	if got := term.screen(); !slices.Equal(got, want) {
		t.Errorf("the terminal shows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// progressModel copies the app-removed pair to DIR/m.json and writes
// script as the destroy hook of its instance class under DIR/hooks; it
// returns DIR and the model's path.
func progressModel(t *testing.T, script string) (dir, model string) {
	t.Helper()
	dir = t.TempDir()
	data, err := os.ReadFile("../testdata/pairs/app-removed.json")
	if err != nil {
		t.Fatal(err)
	}
	model = filepath.Join(dir, "m.json")
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	hookDir := filepath.Join(dir, "hooks", "io.murano.resources.LinuxMuranoInstance")
	if err := os.MkdirAll(hookDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hookDir, "destroy"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, model
}

// TestApplyStatusLine: where stderr is no terminal, a status line every
// --status-interval while a hook runs, naming it; none on a terminal,
// which has its progress line.
func TestApplyStatusLine(t *testing.T) {
	t.Setenv("OBJGC_CACHE_DIR", t.TempDir())
	for _, tty := range []bool{false, true} {
		dir, model := progressModel(t, "#!/bin/sh\nsleep 2.3\n")
		var out, errb bytes.Buffer
		streams := &IO{In: strings.NewReader(""), Out: &out, Err: &errb, IsTTYErr: tty, progress: &progressTiming{}, Getenv: envWith(map[string]string{"NO_COLOR": "", "TERM": ""})}
		args := []string{"apply", "--hooks-dir", filepath.Join(dir, "hooks"), "--status-interval", "1s", model}
		if code := run(context.Background(), BuildInfo{}, args, streams); code != ExitOK {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		want := "objects done, 0 failed; running: io.murano.resources.LinuxMuranoInstance 76b9ca88-c668-4e37-a830-5845adc10b0e (destroy, "
		if n := strings.Count(errb.String(), want); tty && n != 0 || !tty && n < 2 {
			t.Errorf("terminal %v: %d status lines:\n%q", tty, n, errb.String())
		}
	}
}
