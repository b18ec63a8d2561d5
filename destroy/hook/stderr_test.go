//go:build unix

package hook

import (
	"strconv"
	"strings"
	"testing"
)

// TestRunStderrLinesEscaped: the lines handed to Invocation.Stderr hold no
// control character, invalid UTF-8 or other unprintable rune the hook
// wrote: such a line arrives Go-quoted, a plain one unchanged. The tail
// for the report keeps the bytes as written.
func TestRunStderrLinesEscaped(t *testing.T) {
	var lines []string
	inv := Invocation{Stderr: func(l string) { lines = append(lines, l) }}
	res, err := run(t, inv, `
printf 'plain line, tab\there\n' >&2
printf '\033]0;pwned\007\033[2Jcleared\n' >&2
printf 'forged\r0 to destroy\r\n' >&2
printf 'bell\007 nul\000 del\177\n' >&2
printf 'latin1 caf\351 overlong \300\257\n' >&2
printf '8-bit csi \302\233 bidi \342\200\256 sep \342\200\250\n' >&2
printf '"starts with a quote"\n' >&2
`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"plain line, tab\there",
		strconv.Quote("\x1b]0;pwned\a\x1b[2Jcleared"),
		strconv.Quote("forged\r0 to destroy"),
		strconv.Quote("bell\a nul\x00 del\x7f"),
		strconv.Quote("latin1 caf\xe9 overlong \xc0\xaf"),
		strconv.Quote("8-bit csi \u009b bidi \u202e sep \u2028"),
		strconv.Quote(`"starts with a quote"`),
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines %q; want %q", len(lines), lines, want)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d = %s; want %s", i, lines[i], want[i])
		}
	}
	if !strings.HasPrefix(res.StderrTail, "plain line") || !strings.Contains(res.StderrTail, "\x1b]0;pwned\a") || !strings.Contains(res.StderrTail, "caf\xe9") {
		t.Errorf("tail %q; want the bytes as the hook wrote them", res.StderrTail)
	}
}
