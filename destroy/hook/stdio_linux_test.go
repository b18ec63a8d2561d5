package hook

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestRunStdinReadTwice(t *testing.T) {
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first"), filepath.Join(dir, "second")
	doc := bigDocument()
	// On Linux stdin is a file: opening it again (/proc/self/fd/0) reads
	// the document from the start, and a write to it fails (sealed).
	_, err := run(t, Invocation{Stdin: doc}, `
cat >"`+first+`"
if printf 'changed' >&0; then echo "stdin is writable" >&2; exit 1; fi
cat /proc/self/fd/0 >"`+second+`"
`)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{first, second} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, doc) {
			t.Errorf("%s: hook read %d bytes, want the %d of the document", filepath.Base(f), len(b), len(doc))
		}
	}
}
