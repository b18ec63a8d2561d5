package snapshot

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/objgc/objgc/internal/jsonskip"
)

// renderPath turns path segments into a JSON path such as
// $.applications[0]["?"].id. Keys that are not identifiers are quoted.
// Very deep paths keep their first and last segments.
func renderPath(data []byte, segs []int32) string {
	var b strings.Builder
	b.WriteString("$")
	const keep = 12
	for i, seg := range segs {
		if len(segs) > 2*keep && i == keep {
			b.WriteString("...")
		}
		if len(segs) > 2*keep && i >= keep && i < len(segs)-keep {
			continue
		}
		if seg == 0 {
			// A key's quote is never at offset 0 (it sits inside an
			// object): 0 marks an object whose next key is not read yet.
			continue
		}
		if seg < 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(int(-seg - 1)))
			b.WriteByte(']')
			continue
		}
		writeKey(&b, keyAt(data, int(seg)))
	}
	return b.String()
}

// keyAt decodes the key whose opening quote is at off.
func keyAt(data []byte, off int) string {
	end := off + 1
	for end < len(data) && data[end] != '"' {
		if data[end] == '\\' {
			end++
		}
		end++
	}
	if end >= len(data) {
		return string(data[off+1:])
	}
	raw := data[off : end+1]
	if strings.IndexByte(string(raw), '\\') >= 0 {
		return unescape(raw)
	}
	return string(raw[1 : len(raw)-1])
}

func writeKey(b *strings.Builder, k string) {
	ident := k != ""
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			ident = false
			break
		}
	}
	if ident {
		b.WriteByte('.')
		b.WriteString(k)
		return
	}
	q, _ := json.Marshal(k)
	b.WriteByte('[')
	b.Write(q)
	b.WriteByte(']')
}

// descend returns the path suffix, relative to the value data[from:to],
// of the value starting at off. The input is already validated.
func descend(data []byte, from, to, off int) string {
	var b strings.Builder
	pos := from
	for pos < to && pos != off {
		switch data[pos] {
		case '{':
			pos = jsonskip.WS(data, pos+1)
			for pos < to && data[pos] == '"' {
				kend := jsonskip.String(data, pos)
				key := keyAt(data, pos)
				vstart := jsonskip.WS(data, jsonskip.WS(data, kend)+1)
				vend := jsonskip.Value(data, vstart)
				if off >= vstart && off < vend {
					writeKey(&b, key)
					pos = vstart
					break
				}
				pos = jsonskip.WS(data, vend)
				if pos < to && data[pos] == ',' {
					pos = jsonskip.WS(data, pos+1)
				}
			}
		case '[':
			pos = jsonskip.WS(data, pos+1)
			for i := 0; pos < to && data[pos] != ']'; i++ {
				vend := jsonskip.Value(data, pos)
				if off >= pos && off < vend {
					b.WriteString("[" + strconv.Itoa(i) + "]")
					break
				}
				pos = jsonskip.WS(data, vend)
				if pos < to && data[pos] == ',' {
					pos = jsonskip.WS(data, pos+1)
				}
			}
		default:
			return b.String()
		}
	}
	return b.String()
}
