package atomicfile

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteOpen: the file returned is the one now at path, its offset
// after the content, so appending to it lands in the file at path; no
// temporary file is left.
func TestWriteOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "j")
	if err := os.WriteFile(path, []byte("old journal\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := WriteOpen(path, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, "header\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("record\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "header\nrecord\n" {
		t.Errorf("%s = %q, %v; want the new content and the appended record", path, got, err)
	}
	assertOnly(t, dir, "j")
}

// TestWriteFails: a failing write leaves path as it was and no temporary
// file.
func TestWriteFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, 0o644, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v, want boom wrapped with the path", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("%s = %q after a failed write, want %q", path, got, "old")
	}
	assertOnly(t, dir, "m.json")
}

// TestSyncDir: fsyncing a folder works; a missing one is an error.
func TestSyncDir(t *testing.T) {
	dir := t.TempDir()
	if err := SyncDir(dir); err != nil {
		t.Errorf("SyncDir(%s) = %v", dir, err)
	}
	if err := SyncDir(filepath.Join(dir, "missing")); err == nil && !isWindows() {
		t.Error("SyncDir of a missing folder: no error")
	}
}

func isWindows() bool { return filepath.Separator == '\\' }

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("%s holds %v, want only %v", dir, got, names)
	}
}

// TestAsyncHash checks the hash computed beside the writing against
// sha256 of the same bytes, written in pieces of every size from one byte
// to several times the piece it hands over at once.
func TestAsyncHash(t *testing.T) {
	data := make([]byte, 5*hashPiece+123)
	for i := range data {
		data[i] = byte(i * 7)
	}
	a := newAsyncHash()
	for rest, n := data, 1; len(rest) > 0; n = n*3 + 1 {
		k := min(n, len(rest))
		a.Write(rest[:k])
		rest = rest[k:]
	}
	want := sha256.Sum256(data)
	if got := a.Sum(); !bytes.Equal(got, want[:]) || !bytes.Equal(a.Sum(), want[:]) {
		t.Fatalf("sum %x, want %x", got, want)
	}
}
