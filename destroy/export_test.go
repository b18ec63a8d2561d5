package destroy

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/objgc/objgc/destroy/journal"
	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/destroy/writeback"
)

// Helpers only the tests call.

// writeBack writes the model writeback.Build decides to w; nothing is
// written when Build returns an error.
func writeBack(w io.Writer, p *order.Plan, out writeback.Effects, attributes json.RawMessage, onDanglingKeep bool) error {
	m, err := writeback.Build(p, out, attributes, onDanglingKeep)
	if err != nil {
		return err
	}
	if _, err := m.WriteTo(w); err != nil {
		return fmt.Errorf("writing the model: %w", err)
	}
	return nil
}

// testInputs are the inputs of the journals the tests open.
func testInputs() []journal.Input {
	return []journal.Input{{Path: "snap.json", SHA256: strings.Repeat("a", 64)}, {Path: "graph.json", SHA256: strings.Repeat("b", 64)}}
}

// hookEnded writes a hook run's result to j (EndHook without the Seq).
func hookEnded(j *journal.Journal, k journal.HookKey, res journal.HookResult) error {
	_, err := j.EndHook(k, res)
	return err
}

// readLines returns the lines of the journal at path, which must end in
// a newline.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("journal %q does not end in a newline", b)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
