package journal

import (
	"fmt"
	"path/filepath"

	"github.com/objgc/objgc/internal/inputfile"
)

// Commit records that the write-back of outputs has been renamed into
// place (and its folder fsynced). Call it before Remove: should Remove not
// happen, the next Open knows this journal is finished and
// replaces it. No record may follow it. outputs must not be empty.
func (j *Journal) Commit(outputs []Input) error {
	if len(outputs) == 0 {
		return fmt.Errorf("journal %s: commit record without outputs", j.path)
	}
	return j.writeSync(commitRecord{Outputs: outputs})
}

// Committing records that outputs (absolute paths, each with the sha256
// of the content about to be renamed over it) are about to be renamed
// into place. Call it after the new content is fsynced and before the
// rename; Commit once the rename is done.
func (j *Journal) Committing(outputs []Input) error {
	if len(outputs) == 0 {
		return fmt.Errorf("journal %s: committing record without outputs", j.path)
	}
	return j.writeSync(committingRecord{Outputs: outputs})
}

// landed reports whether every output holds the content a committing
// record names. An input of this run with the same path and sha256 says
// so without reading the file again.
func landed(outputs, inputs []Input) bool {
	for _, o := range outputs {
		known := false
		for _, in := range inputs {
			if abs, err := filepath.Abs(in.Path); err == nil && abs == o.Path && in.SHA256 == o.SHA256 {
				known = true
			}
		}
		if known {
			continue
		}
		sum, err := inputfile.SHA256(o.Path)
		if err != nil || sum != o.SHA256 {
			return false
		}
	}
	return true
}
