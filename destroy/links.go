package destroy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrHardLinks is wrapped by the *HardLinksError of CheckLinks.
var ErrHardLinks = errors.New("target has more than one hard link")

// HardLinksError refuses a target that has more than one hard link.
// apply's lock and journal sit beside a name (<target>.lock), so that an
// apply through another link of the same file would take another lock
// and run the same hooks at the same time; and the atomic write-back
// renames a new file over the name, which would leave the other names on
// the old file: two different models.
type HardLinksError struct {
	Path  string // the target as apply names it
	Links uint64 // its link count
}

func (e *HardLinksError) Error() string {
	return fmt.Sprintf("%s has %d hard links: apply locks a target by its name, so an apply through another link would run the same hooks at the same time, "+
		"and the write-back (a rename) would split the links into different files; remove the other links (find -samefile %s lists them) or apply a copy",
		e.Path, e.Links, e.Path)
}

func (e *HardLinksError) Unwrap() error { return ErrHardLinks }

// CheckLinks returns a *HardLinksError when the file at path (links
// followed) has more than one hard link; nil when it has one, or does not
// exist (a --write target yet to be made). Other errors of stat(2) are
// returned as they are. Where the system does not say (Windows), nil.
func CheckLinks(path string) error {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if n := linkCount(st); n > 1 {
		return &HardLinksError{Path: path, Links: n}
	}
	return nil
}
