package cmd

import (
	"os"
	"strconv"
	"strings"

	"github.com/objgc/objgc/pkgcache"
)

// holderJSON is who holds a package's usage lock, in the JSON of the
// packages a command skipped in use.
type holderJSON struct {
	PID     int    `json:"pid"`               // -1: a lock that names no process (another objgc)
	Command string `json:"command,omitempty"` // its /proc/PID/comm, where readable
}

// usageHolder asks who holds the usage lock of package id in c (see
// pkgcache.Cache.UsageLockHolder); nil when nobody does any more or it
// cannot be told.
func usageHolder(c *pkgcache.Cache, id string) *holderJSON {
	pid := c.UsageLockHolder(id)
	switch {
	case pid == 0:
		return nil
	case pid < 0:
		return &holderJSON{PID: -1}
	}
	h := &holderJSON{PID: pid}
	// The name the process gave itself (at most 15 bytes, chosen by
	// whoever runs it): escaped where it is shown.
	if comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil {
		h.Command = strings.TrimSuffix(string(comm), "\n")
	}
	return h
}

// holderText says who holds a usage lock, for "in use" lines: ", held by
// pid 1234 (murano-engine)", ", held by another objgc", or "".
func holderText(h *holderJSON) string {
	switch {
	case h == nil:
		return ""
	case h.PID < 0:
		return ", held by another objgc (plan, apply or a cache command)"
	case h.Command == "":
		return ", held by pid " + strconv.Itoa(h.PID)
	}
	return ", held by pid " + strconv.Itoa(h.PID) + " (" + term(h.Command) + ")"
}
