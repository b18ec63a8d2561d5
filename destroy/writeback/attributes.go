package writeback

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/objgc/objgc/internal/jsonedit"
)

// attributes returns the writer of the Attributes value: attributes
// without the rows [objectId, typeName, key, value] of destroyed objects.
func (wb *writeBack) attributes(raw json.RawMessage, destroyedFlags []bool) (func(jsonedit.Writer) error, error) {
	data := bytes.TrimSpace(raw)
	if len(data) == 0 || string(data) == "null" {
		return func(w jsonedit.Writer) error { _, err := w.WriteString("[]"); return err }, nil
	}
	if !json.Valid(data) {
		return nil, errors.New("write-back: Attributes is not valid JSON")
	}
	if data[0] != '[' {
		return nil, errors.New("write-back: Attributes: expected an array of [objectId, typeName, key, value] rows")
	}
	gone := map[string]bool{}
	for k := range wb.p.Objects {
		if destroyedFlags[k] {
			gone[wb.p.ID(k)] = true
		}
	}
	for _, i := range wb.d.Dropped {
		gone[wb.in.ID(i)] = true
	}
	r := jsonedit.NewRewriter(data)
	rows, _ := jsonedit.Members(data, 0)
	for _, row := range rows {
		if data[row.VS] != '[' {
			continue
		}
		cells, _ := jsonedit.Members(data, row.VS)
		if len(cells) == 0 || data[cells[0].VS] != '"' {
			continue
		}
		if id, err := jsonedit.DecodeString(data[cells[0].VS:cells[0].VE]); err == nil && gone[id] {
			r.At(row.VS).Remove = true
		}
	}
	return func(w jsonedit.Writer) error { return r.Value(w, 0, len(data)) }, nil
}
