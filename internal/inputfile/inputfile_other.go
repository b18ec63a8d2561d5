//go:build !unix

package inputfile

import "os"

// openFlags: no O_NONBLOCK here; Check before Open is what guards.
const openFlags = 0

func clearNonblock(*os.File) error { return nil }
