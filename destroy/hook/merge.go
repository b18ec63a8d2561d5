package hook

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// MergePatch applies patch, an RFC 7386 JSON Merge Patch, to doc and
// returns the patched document: members of a patch object replace those of
// the target, a null member removes one, nested objects merge recursively
// (a target that is not an object counts as {}), and any other patch value
// (an array, a string, null) replaces the target as a whole, verbatim.
// Both inputs must be valid JSON. The output is compact JSON; the members
// of doc keep their order and new members follow in the patch's order.
//
// The merge itself is github.com/evanphx/json-patch/v5's. Around it,
// MergePatch restores RFC 7386 where that library departs from it: it
// drops null members of objects inside a patch array when the target
// member is not an object, rejects a target that is null, and escapes
// <, > and & in every string.
func MergePatch(doc, patch []byte) ([]byte, error) {
	if !json.Valid(doc) {
		return nil, errors.New("applying merge patch: target is not valid JSON")
	}
	if !json.Valid(patch) {
		return nil, errors.New("applying merge patch: patch is not valid JSON")
	}
	patch = bytes.Trim(patch, jsonSpace)
	if patch[0] != '{' {
		return compact(patch)
	}
	if d := bytes.Trim(doc, jsonSpace); d[0] != '{' {
		doc = []byte("{}")
	}
	// Arrays in the patch replace their target verbatim: hide each one
	// from the library behind a placeholder string and put it back after.
	mark, err := placeholderPrefix(doc)
	if err != nil {
		return nil, err
	}
	var arrays [][]byte
	patch, err = hideArrays(patch, mark, &arrays)
	if err != nil {
		return nil, fmt.Errorf("applying merge patch: %w", err)
	}
	out, err := jsonpatch.MergePatch(doc, patch)
	if err != nil {
		return nil, fmt.Errorf("applying merge patch: %w", err)
	}
	out = unescapeHTML(out)
	for i, a := range arrays {
		out = bytes.Replace(out, []byte(`"`+mark+strconv.Itoa(i)+`"`), a, 1)
	}
	return out, nil
}

const jsonSpace = " \t\r\n"

func compact(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, fmt.Errorf("applying merge patch: %w", err)
	}
	return buf.Bytes(), nil
}

// placeholderPrefix returns a string that occurs nowhere in doc.
func placeholderPrefix(doc []byte) (string, error) {
	var nonce [12]byte
	for {
		if _, err := rand.Read(nonce[:]); err != nil {
			return "", fmt.Errorf("applying merge patch: %w", err)
		}
		mark := "objgc-array-" + hex.EncodeToString(nonce[:]) + "-"
		if !bytes.Contains(doc, []byte(mark)) {
			return mark, nil
		}
	}
}

// hideArrays rewrites the patch object obj, replacing every array reached
// through object members with the string mark+N, where arrays[N] is the
// array, compacted. Member order is kept.
func hideArrays(obj []byte, mark string, arrays *[][]byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for i := 0; dec.More(); i++ {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		switch val[0] {
		case '{':
			if val, err = hideArrays(val, mark, arrays); err != nil {
				return nil, err
			}
		case '[':
			a, err := compact(val)
			if err != nil {
				return nil, err
			}
			*arrays = append(*arrays, a)
			val = json.RawMessage(`"` + mark + strconv.Itoa(len(*arrays)-1) + `"`)
		}
		if i > 0 {
			out.WriteByte(',')
		}
		k, err := json.Marshal(key)
		if err != nil {
			return nil, err
		}
		out.Write(k)
		out.WriteByte(':')
		out.Write(val)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// unescapeHTML turns the \u003c, \u003e and \u0026 escapes that Go's JSON
// encoder writes for <, > and & back into the characters, so that patched
// strings read as the hook wrote them. b is valid compact JSON.
func unescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			out = append(out, c)
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "003c", "003C":
				out = append(out, '<')
				i += 5
				continue
			case "003e", "003E":
				out = append(out, '>')
				i += 5
				continue
			case "0026":
				out = append(out, '&')
				i += 5
				continue
			}
		}
		// Any other escape is copied whole, so that the backslash of
		// \\ is never taken for the start of an escape.
		out = append(out, c, b[i+1])
		i++
	}
	return out
}

// Document is the JSON document a hook reads on stdin (DESIGN 4).
type Document struct {
	// Event is "destroy" or "notify", as OBJGC_EVENT.
	Event string `json:"event"`
	// Object is the doomed object as in the snapshot, owned objects
	// inline.
	Object json.RawMessage `json:"object"`
	// OwnerID is the id of the object's owner; null for a top-level
	// object.
	OwnerID *string `json:"owner_id"`
	// Subscriber is the subscriber whose handler runs, as in the incoming
	// model; notifications only.
	Subscriber json.RawMessage `json:"subscriber,omitempty"`
}

// Marshal encodes d for Invocation.Stdin.
func (d Document) Marshal() ([]byte, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encoding hook document: %w", err)
	}
	return b, nil
}
