//go:build !unix

package inputfile

import "os"

// openFlags: no O_NONBLOCK here; Check before Open is what guards.
const openFlags = 0

// ClearNonblock does nothing: no file is opened O_NONBLOCK here.
func ClearNonblock(*os.File) error { return nil }
