package jsonedit

import (
	"encoding/json"
	"strings"
)

// WriteKey appends the step to the object member key to a JSON path in b:
// ".key" when key is an identifier (a letter or '_', then letters, digits
// or '_'), else `["key"]` with key as a JSON string.
func WriteKey(b *strings.Builder, key string) {
	ident := key != ""
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			ident = false
			break
		}
	}
	if ident {
		b.WriteByte('.')
		b.WriteString(key)
		return
	}
	q, _ := json.Marshal(key)
	b.WriteByte('[')
	b.Write(q)
	b.WriteByte(']')
}

// ChildPath returns the JSON path of the member key of the object at path.
func ChildPath(path, key string) string {
	var b strings.Builder
	b.WriteString(path)
	WriteKey(&b, key)
	return b.String()
}
