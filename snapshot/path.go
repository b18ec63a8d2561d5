package snapshot

import (
	"encoding/json"
	"strconv"
	"strings"
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
			pos = skipWS(data, pos+1)
			for pos < to && data[pos] == '"' {
				kend := skipString(data, pos)
				key := keyAt(data, pos)
				vstart := skipWS(data, skipWS(data, kend)+1)
				vend := skipValue(data, vstart)
				if off >= vstart && off < vend {
					writeKey(&b, key)
					pos = vstart
					break
				}
				pos = skipWS(data, vend)
				if pos < to && data[pos] == ',' {
					pos = skipWS(data, pos+1)
				}
			}
		case '[':
			pos = skipWS(data, pos+1)
			for i := 0; pos < to && data[pos] != ']'; i++ {
				vend := skipValue(data, pos)
				if off >= pos && off < vend {
					b.WriteString("[" + strconv.Itoa(i) + "]")
					break
				}
				pos = skipWS(data, vend)
				if pos < to && data[pos] == ',' {
					pos = skipWS(data, pos+1)
				}
			}
		default:
			return b.String()
		}
	}
	return b.String()
}

func skipWS(data []byte, pos int) int {
	for pos < len(data) && (data[pos] == ' ' || data[pos] == '\n' || data[pos] == '\t' || data[pos] == '\r') {
		pos++
	}
	return pos
}

// skipString returns the offset just past the string starting at pos.
func skipString(data []byte, pos int) int {
	pos++
	for pos < len(data) {
		switch data[pos] {
		case '\\':
			pos += 2
			continue
		case '"':
			return pos + 1
		}
		pos++
	}
	return pos
}

// skipValue returns the offset just past the (valid) value at pos.
func skipValue(data []byte, pos int) int {
	depth := 0
	for pos < len(data) {
		switch data[pos] {
		case '"':
			pos = skipString(data, pos)
			if depth == 0 {
				return pos
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth <= 0 {
				return pos + 1
			}
		case ',', ' ', '\n', '\t', '\r', ':':
			if depth == 0 {
				return pos
			}
		}
		pos++
	}
	return pos
}
