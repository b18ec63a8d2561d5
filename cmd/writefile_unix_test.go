//go:build unix

package cmd

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteFileAtomicThroughLinks: a chain of symbolic links is written
// through: every link stays, the file at the end gets the new content and
// keeps its mode, and no temporary file is left in either folder.
func TestWriteFileAtomicThroughLinks(t *testing.T) {
	top, real := t.TempDir(), t.TempDir()
	file := filepath.Join(real, "model.json")
	if err := os.WriteFile(file, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mid := filepath.Join(top, "mid.json")
	if err := os.Symlink(file, mid); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(top, "link.json")
	if err := os.Symlink("mid.json", link); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(link, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, "new\n")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{link, mid} {
		if st, err := os.Lstat(l); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link: %v %v", l, st, err)
		}
	}
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(file); string(got) != "new\n" {
		t.Errorf("the file holds %q", got)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 kept", st.Mode().Perm())
	}
	for _, dir := range []string{top, real} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-") {
				t.Errorf("temporary file left: %s", filepath.Join(dir, e.Name()))
			}
		}
	}
}

// TestWriteFileAtomicRefusesFIFO: a named pipe is not replaced by a
// regular file (the last guard behind checkOutput).
func TestWriteFileAtomicRefusesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	err := writeFileAtomic(fifo, 0o644, func(w io.Writer) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "not a regular file (named pipe)") {
		t.Errorf("err = %v", err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", st, err)
	}
}
