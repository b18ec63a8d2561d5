package pkgcache

import "testing"

// validFullName against Murano's own check, _check_full_name in
// murano/packages/package_base.py (Python's Unicode \w), on the names
// below, as Python 3 answers them.
func TestValidFullName(t *testing.T) {
	for name, want := range map[string]bool{
		"io.murano": true, "пакет.big": true, "包.应用": true, "a_b.c1": true, "_x": true,
		"x²": true, "Ⅷ": true, "١٢": true, "ªʰ": true, "1.0": true,
		".x": false, "x.": false, "a..b": false, "": false, "a b": false, "a-b": false,
		"a/b": false, "e\u0301": false, "a\u203fb": false, "a\n": false, "a@b": false,
	} {
		if got := validFullName(name); got != want {
			t.Errorf("validFullName(%q) = %v, want %v", name, got, want)
		}
	}
}
