package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// fsImmutableFL is FS_IMMUTABLE_FL of linux/fs.h (x/sys/unix does not
// name it).
const fsImmutableFL = 0x00000010

// setImmutable sets or clears the immutable attribute (chattr +i) of dir:
// no entry can then be created in it, by root either.
func setImmutable(dir string, on bool) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil {
		return err
	}
	if on {
		flags |= fsImmutableFL
	} else {
		flags &^= fsImmutableFL
	}
	return unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags))
}
