package hook

import (
	"bytes"
	"os"
	"strconv"
)

// onlyZombies reports whether every member of the process group pgid is a
// zombie, reading /proc/<pid>/stat ("pid (comm) state ppid pgrp ...").
// When /proc cannot be read it reports false: the group counts as alive.
func onlyZombies(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	want := []byte(strconv.Itoa(pgid))
	for _, e := range entries {
		name := e.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) < 3 || !bytes.Equal(f[2], want) {
			continue
		}
		if s := f[0][0]; s != 'Z' && s != 'X' {
			return false
		}
	}
	return true
}
