package pkgcache

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// verify reads a package of the engine's that does not load again until
// its files settle (docs/cache.md, "Verify"): the engine deletes such a
// package without any lock and unpacks it again in place, so a failed
// read may have met it in flux. Between settle's reads the test changes
// the package's files as the engine would (a new manifest.yaml, a new
// file each time), and checks that verify calls it damaged only once the
// files stay the same and still do not load; a package that keeps
// changing is being unpacked (InUse, exit 3 for the command), and one
// that ends whole is no problem.
func TestVerifySettles(t *testing.T) {
	const id = "00000000000000000000000000000abc"
	src := testPkg("com.example.databases.MySql")
	good, err := os.ReadFile(filepath.Join(src, "manifest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	broken := []byte("Format: [\n")
	// replace puts a new manifest.yaml in place (another file, as an
	// unpack writes), with data.
	replace := func(t *testing.T, dir string, data []byte) {
		tmp := filepath.Join(dir, ".new")
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "manifest.yaml")); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		changes int    // reads after which the manifest is replaced (broken again)
		whole   bool   // the last change writes the whole manifest back
		want    string // "damaged", "changing" or "ok"
	}{
		{"stable damage", 0, false, "damaged"},
		{"changed once, then stable", 1, false, "damaged"},
		{"keeps changing", settleTries, false, "changing"},
		{"unpacked again whole", 2, true, "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := openCache(t)
			if err := os.MkdirAll(c.root, 0o755); err != nil {
				t.Fatal(err)
			}
			c, err = Open(c.root)
			if err != nil {
				t.Fatal(err)
			}
			e := engineUnpack(t, c, src, id)
			replace(t, e.Dir, broken)
			reads := 0
			settleReadHook = func(int) {
				reads++
				if reads > tc.changes {
					return
				}
				if tc.whole && reads == tc.changes {
					replace(t, e.Dir, good)
					return
				}
				replace(t, e.Dir, broken)
			}
			t.Cleanup(func() { settleReadHook = nil })
			res, err := c.Verify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			switch tc.want {
			case "damaged":
				if len(res.Problems) != 1 || res.Problems[0].Path != e.Dir || !strings.Contains(res.Problems[0].Problem, "does not load") || len(res.InUse) != 0 {
					t.Fatalf("want it damaged: %+v", res)
				}
				if reads != tc.changes+1 {
					t.Errorf("called damaged after %d unchanged failed reads, want %d", reads, tc.changes+1)
				}
			case "changing":
				if len(res.Problems) != 0 || len(res.InUse) != 1 || !strings.Contains(res.InUse[0].Problem, "its files changed while it was read") {
					t.Fatalf("want it in use, changing: %+v", res)
				}
			case "ok":
				if len(res.Problems) != 0 || len(res.InUse) != 0 || res.Checked != 1 {
					t.Fatalf("want it whole: %+v", res)
				}
			}
		})
	}
}
