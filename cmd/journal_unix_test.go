//go:build unix

package cmd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestJournalPriorities: with JOURNAL_STREAM naming its stderr, as
// systemd sets it for a service, objgc's error line carries <3> and its
// warnings <4>, which journald reads as the lines' priorities; with
// JOURNAL_STREAM naming another file (inherited from a parent), nothing
// is added. A real objgc process, its stderr a file.
func TestJournalPriorities(t *testing.T) {
	dir := t.TempDir()
	run := func(journal func(dev, ino uint64) string) string {
		t.Helper()
		errFile := filepath.Join(dir, "stderr")
		f, err := os.Create(errFile)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		cmd := exec.Command(os.Args[0], "cache", "list", "--cache-dir", filepath.Join(dir, "none"))
		cmd.Env = append(os.Environ(), "OBJGC_TEST_CMD_RUN=1", "OBJGC_CAHCE_DIR=x",
			"JOURNAL_STREAM="+journal(uint64(sys.Dev), uint64(sys.Ino)))
		cmd.Stderr = f
		if err := cmd.Run(); err == nil {
			t.Fatal("cache list of no cache exited 0")
		}
		data, err := os.ReadFile(errFile)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	got := run(func(dev, ino uint64) string { return fmt.Sprintf("%d:%d", dev, ino) })
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "<4>objgc: warning: OBJGC_CAHCE_DIR is not a setting") ||
		!strings.HasPrefix(lines[1], "<3>objgc: no package cache at ") {
		t.Errorf("stderr is the journal: got\n%s\nwant a <4> warning and a <3> error", got)
	}
	got = run(func(dev, ino uint64) string { return fmt.Sprintf("%d:%d", dev, ino+1) })
	if strings.Contains(got, "<3>") || strings.Contains(got, "<4>") || !strings.HasPrefix(got, "objgc: warning: ") {
		t.Errorf("JOURNAL_STREAM of another file: got\n%s\nwant no prefixes", got)
	}
}

// TestLinePriority: the priority of each kind of line objgc writes to
// stderr.
func TestLinePriority(t *testing.T) {
	for line, want := range map[string]string{
		"objgc: no package cache at /x\n":             "<3>",
		"objgc: warning: cache dir /x: no such dir\n": "<4>",
		"warning: patch_revives_doomed: ...\n":        "<4>",
		"objgc: note: the inputs changed\n":           "<5>",
		"removed com.example.a 1.0.0\n":               "",
		"Run 'objgc --help' for usage.\n":             "",
	} {
		if got := linePriority(line); got != want {
			t.Errorf("%q: %q, want %q", line, got, want)
		}
	}
	var b strings.Builder
	j := &journalWriter{w: &b}
	fmt.Fprint(j, "objgc: a")
	fmt.Fprint(j, "b\nobjgc: warning: c\npartial")
	j.Flush()
	if want := "<3>objgc: ab\n<4>objgc: warning: c\npartial"; b.String() != want {
		t.Errorf("written %q, want %q", b.String(), want)
	}
}
