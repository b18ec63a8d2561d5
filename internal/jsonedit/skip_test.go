package jsonedit

import "testing"

// TestValue: each value of a document, from its first byte, ends where
// its last byte ends, whatever follows it.
func TestValue(t *testing.T) {
	tests := []struct {
		doc  string
		pos  int
		want string
	}{
		{`{"a":1}`, 5, `1`},
		{`[true,false]`, 1, `true`},
		{`[1,-2.5e3]`, 3, `-2.5e3`},
		{`{"a": null }`, 6, `null`},
		{`{"s":"x\"}y","t":2}`, 5, `"x\"}y"`},
		{`{"o":{"p":[1,{"q":"]"}]},"r":3}`, 5, `{"p":[1,{"q":"]"}]}`},
		{`[[],{}]`, 1, `[]`},
		{`"\\"`, 0, `"\\"`},
		{`7`, 0, `7`},
	}
	for _, tt := range tests {
		end := Value([]byte(tt.doc), tt.pos)
		if got := tt.doc[tt.pos:end]; got != tt.want {
			t.Errorf("Value(%s, %d) = %q, want %q", tt.doc, tt.pos, got, tt.want)
		}
	}
}

func TestWSAndString(t *testing.T) {
	data := []byte(" \t\r\n\"a\\\\\" x")
	if got := WS(data, 0); got != 4 {
		t.Errorf("WS = %d, want 4", got)
	}
	if got := String(data, 4); got != 9 {
		t.Errorf("String = %d, want 9", got)
	}
	if got := WS(data, len(data)); got != len(data) {
		t.Errorf("WS at the end = %d", got)
	}
}
