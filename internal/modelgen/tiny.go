package modelgen

import (
	"bufio"
	"fmt"
	"io"
)

// Tiny writes a model envelope (Objects and ObjectsCopy) in which n tiny
// objects, each only an "?" header with an id and a type, live in the
// snapshot (ObjectsCopy) under the environment's "apps" array and are gone
// from the incoming model (Objects): all n are doomed, none has an owner
// left, no hook or reference. It is the shape whose plan is largest for
// its size (about 46 bytes of model per doomed object: n = 200,000 is a
// 9 MB model, 1,000,000 a 45 MB one). Ids are "d" and 9 decimal
// digits (n at most 10^9); the bytes depend on n only.
func Tiny(w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	env := `{"?": {"id": "tiny-env", "type": "t.Env"}`
	fmt.Fprintf(bw, "{\"Objects\": %s, \"apps\": []},\n\"ObjectsCopy\": %s, \"apps\": [\n", env, env)
	for i := range n {
		sep := ",\n"
		if i == n-1 {
			sep = "\n"
		}
		fmt.Fprintf(bw, `{"?": {"id": "d%09d", "type": "t.A"}}%s`, i, sep)
	}
	bw.WriteString("]}}\n")
	return bw.Flush()
}
