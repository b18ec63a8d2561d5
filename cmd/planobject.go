package cmd

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/objgc/objgc/destroy"
	"github.com/objgc/objgc/internal/swar"
)

// indentSpaces holds the indentations of the plan's JSON, up to 64 spaces.
const indentSpaces = "                                                                "

// deeper returns prefix with two more spaces: a piece of indentSpaces for a
// prefix of spaces, as every prefix of the plan's JSON is, so that the
// writing of each object does not make its indentations anew (new strings
// for every object of the plan).
func deeper(prefix string) string {
	if n := len(prefix) + 2; n <= len(indentSpaces) && prefix == indentSpaces[:len(prefix)] {
		return indentSpaces[:n]
	}
	return prefix + "  "
}

// appendPlanObject appends po as encoding/json writes it indented by two
// spaces after prefix, with HTML characters not escaped (jsonStream.value):
// the same bytes, written directly. A plan of a hundred thousand objects
// spent most of its writing time in encoding/json, reflecting on the struct
// and indenting the encoded bytes a second time. Field order, omitempty and
// null follow destroy.PlanObject's tags; TestAppendPlanObject compares the
// two on every kind of value.
func appendPlanObject(b []byte, prefix string, po *destroy.PlanObject) []byte {
	in := deeper(prefix)
	b = append(b, "{\n"...)
	b = appendField(b, in, "id", po.ID, true)
	b = appendField(b, in, "type", po.Type, true)
	b = appendField(b, in, "path", po.Path, true)
	b = appendNullable(b, in, "owner", po.Owner, true)
	b = append(b, in...)
	b = append(b, `"reasons": `...)
	b = appendArray(b, in, po.Reasons == nil, len(po.Reasons), func(b []byte, p string, i int) []byte {
		r := po.Reasons[i]
		b = append(b, "{\n"...)
		pi := deeper(p)
		b = appendField(b, pi, "code", string(r.Code), r.ID != "" || r.Handler != "")
		if r.ID != "" {
			b = appendField(b, pi, "id", r.ID, r.Handler != "")
		}
		if r.Handler != "" {
			b = appendField(b, pi, "handler", r.Handler, false)
		}
		return append(append(b, p...), '}')
	})
	b = append(b, ",\n"...)
	b = append(b, in...)
	b = append(b, `"type_ref": `...)
	b = appendPlanType(b, in, po.TypeRef)
	b = append(b, ",\n"...)
	b = append(b, in...)
	b = append(b, `"classes": `...)
	b = appendArray(b, in, po.Classes == nil, len(po.Classes), func(b []byte, _ string, i int) []byte {
		return appendString(b, po.Classes[i])
	})
	b = append(b, ",\n"...)
	b = appendNullable(b, in, "package", po.Package, true)
	b = append(b, in...)
	b = append(b, `"hooks": `...)
	b = appendArray(b, in, po.Hooks == nil, len(po.Hooks), func(b []byte, p string, i int) []byte {
		return appendPlanHook(b, p, &po.Hooks[i])
	})
	b = append(b, '\n')
	b = append(b, prefix...)
	return append(b, '}')
}

// appendPlanNotification appends pn as appendPlanObject appends an object:
// the bytes encoding/json writes for it (TestAppendPlanNotification). A
// plan of ten thousand notifications spent a tenth of a second encoding
// them on one core.
func appendPlanNotification(b []byte, prefix string, pn *destroy.PlanNotification) []byte {
	in := deeper(prefix)
	b = append(b, "{\n"...)
	b = append(b, in...)
	b = append(b, `"group": `...)
	b = strconv.AppendInt(b, int64(pn.Group), 10)
	b = append(b, ",\n"...)
	b = appendField(b, in, "publisher", pn.Publisher, true)
	b = appendField(b, in, "subscriber", pn.Subscriber, true)
	b = append(b, in...)
	b = append(b, `"subscriber_type_ref": `...)
	if pn.SubscriberTypeRef == nil {
		b = append(b, "null"...)
	} else {
		b = appendPlanType(b, in, *pn.SubscriberTypeRef)
	}
	b = append(b, ",\n"...)
	b = appendField(b, in, "handler", pn.Handler, true)
	b = append(b, in...)
	b = append(b, `"hook": `...)
	if pn.Hook == nil {
		b = append(b, "null"...)
	} else {
		b = appendPlanHook(b, in, pn.Hook)
	}
	if len(pn.OldPlaces) > 0 {
		b = append(b, ",\n"...)
		b = append(b, in...)
		b = append(b, `"old_places": `...)
		b = appendArray(b, in, false, len(pn.OldPlaces), func(b []byte, _ string, i int) []byte {
			return appendString(b, pn.OldPlaces[i])
		})
	}
	b = append(b, '\n')
	b = append(b, prefix...)
	return append(b, '}')
}

// appendPlanHook appends h, an object whose sha256 and error are omitted
// when empty, its braces at prefix.
func appendPlanHook(b []byte, prefix string, h *destroy.PlanHook) []byte {
	in := deeper(prefix)
	b = append(b, "{\n"...)
	b = appendField(b, in, "event", h.Event, true)
	b = appendField(b, in, "class", h.Class, true)
	b = appendField(b, in, "path", h.Path, h.SHA256 != "" || h.Error != "")
	if h.SHA256 != "" {
		b = appendField(b, in, "sha256", h.SHA256, h.Error != "")
	}
	if h.Error != "" {
		b = appendField(b, in, "error", h.Error, false)
	}
	b = append(b, prefix...)
	return append(b, '}')
}

// appendPlanType appends t, an object whose version and package are
// omitted when empty, indented at prefix.
func appendPlanType(b []byte, prefix string, t destroy.PlanType) []byte {
	in := deeper(prefix)
	b = append(b, "{\n"...)
	b = appendField(b, in, "name", t.Name, t.Version != "" || t.Package != "")
	if t.Version != "" {
		b = appendField(b, in, "version", t.Version, t.Package != "")
	}
	if t.Package != "" {
		b = appendField(b, in, "package", t.Package, false)
	}
	b = append(b, prefix...)
	return append(b, '}')
}

// appendField appends `prefix"key": "v"`, a comma when more follows, and
// a newline.
func appendField(b []byte, prefix, key, v string, more bool) []byte {
	b = append(b, prefix...)
	b = append(b, '"')
	b = append(b, key...)
	b = append(b, `": `...)
	b = appendString(b, v)
	if more {
		b = append(b, ',')
	}
	return append(b, '\n')
}

// appendNullable is appendField for a *string: null when nil.
func appendNullable(b []byte, prefix, key string, v *string, more bool) []byte {
	if v != nil {
		return appendField(b, prefix, key, *v, more)
	}
	b = append(b, prefix...)
	b = append(b, '"')
	b = append(b, key...)
	b = append(b, `": null`...)
	if more {
		b = append(b, ',')
	}
	return append(b, '\n')
}

// appendArray appends an array of n elements whose brackets sit at prefix
// (null for a nil slice, [] for an empty one); elem appends element i, its
// first line already indented, at the prefix it is given.
func appendArray(b []byte, prefix string, isNil bool, n int, elem func(b []byte, prefix string, i int) []byte) []byte {
	switch {
	case isNil:
		return append(b, "null"...)
	case n == 0:
		return append(b, "[]"...)
	}
	in := deeper(prefix)
	b = append(b, "[\n"...)
	for i := range n {
		if i > 0 {
			b = append(b, ",\n"...)
		}
		b = append(b, in...)
		b = elem(b, in, i)
	}
	b = append(b, '\n')
	b = append(b, prefix...)
	return append(b, ']')
}

// appendString appends s as a JSON string as encoding/json writes it with
// HTML characters not escaped: printable ASCII other than '"' and '\\' as
// it is (ids, types and paths are), anything else through encoding/json.
func appendString(b []byte, s string) []byte {
	i := 0
	// Eight bytes at a time: a JSON plan is mostly ids, types and paths.
	for ; i+8 <= len(s); i += 8 {
		x := swar.Load8(s, i)
		if swar.HasLess(x, 0x20)|swar.HasAbove(x)|swar.HasByte(x, '"')|swar.HasByte(x, '\\') != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return appendMarshaled(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendMarshaled(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err) // a string always encodes
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
