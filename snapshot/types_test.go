package snapshot

import "testing"

func checkParseType(t *testing.T, s string) {
	t.Helper()
	got, ok := ParseType(s)
	m := typeRE.FindStringSubmatch(s)
	if ok != (m != nil) {
		t.Fatalf("ParseType(%q) ok = %v, regexp matches = %v", s, ok, m != nil)
	}
	if m == nil {
		if got != (Type{}) {
			t.Fatalf("ParseType(%q) = %+v on failure", s, got)
		}
		return
	}
	if want := (Type{Name: m[1], Version: m[2], Package: m[3]}); got != want {
		t.Fatalf("ParseType(%q) = %+v, want %+v", s, got, want)
	}
	if got.String() != s {
		t.Fatalf("ParseType(%q).String() = %q", s, got.String())
	}
}

func TestParseType(t *testing.T) {
	tests := []struct {
		in   string
		want Type
		ok   bool
	}{
		{"io.murano.resources.LinuxMuranoInstance/0.0.0@io.murano", Type{"io.murano.resources.LinuxMuranoInstance", "0.0.0", "io.murano"}, true},
		{"io.murano.Environment", Type{Name: "io.murano.Environment"}, true},
		{"a/1", Type{Name: "a", Version: "1"}, true},
		{"a@p", Type{Name: "a", Package: "p"}, true},
		{"a/1.0-rc1+b/x y@p_q.r", Type{"a", "1.0-rc1+b/x y", "p_q.r"}, true},
		{"_/é", Type{"_", "é", ""}, true},
		{"a//", Type{"a", "/", ""}, true},
		{"", Type{}, false},
		{"a b", Type{}, false},
		{"x/@p", Type{}, false},
		{"x@", Type{}, false},
		{"@p", Type{}, false},
		{"/1", Type{}, false},
		{"a/", Type{}, false},
		{"a@b/c", Type{}, false},
		{"a@b@c", Type{}, false},
		{"a/1@b@c", Type{}, false},
		{"a@p-q", Type{}, false},
		{"a-b", Type{}, false},
		{"a\n", Type{}, false},
		{"a/1\n", Type{"a", "1\n", ""}, true},
		{"é", Type{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseType(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseType(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		checkParseType(t, tt.in)
	}
}

func FuzzParseType(f *testing.F) {
	for _, s := range []string{"io.murano.Environment/0.0.0@io.murano", "a", "a/b", "a@b", "a/b@c", "a/@", "@", "/", "a/b/c@d", "a@b@c", "a/\xff@b", "é/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkParseType(t, s)
	})
}
