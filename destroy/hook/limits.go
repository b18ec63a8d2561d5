package hook

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ArgsError is what [Invocation.CheckArgs] returns for an invocation that
// execve(2) would refuse with E2BIG ("argument list too long"): one
// argument or environment string longer than the system passes, or all
// of them together past the system's total.
type ArgsError struct {
	// What names the string: "the object id (argv and OBJGC_OBJECT_ID)",
	// "OBJGC_OBJECT_TYPE", ...; for the total, "the arguments and
	// environment".
	What string
	// Len is the string's length in bytes as execve counts it: with its
	// terminating NUL, and for an environment string with its NAME=
	// (for the total, every string and its pointer); Limit the most the
	// system takes.
	Len, Limit int
	// Name is the system's name for the limit: "MAX_ARG_STRLEN" or
	// "ARG_MAX".
	Name string
}

func (e *ArgsError) Error() string {
	if e.Name == "ARG_MAX" {
		return fmt.Sprintf("%s take %d bytes, more than the %d bytes the system passes to a program (ARG_MAX: a quarter of the stack limit, ulimit -s)", e.What, e.Len, e.Limit)
	}
	return fmt.Sprintf("%s takes %d bytes, more than the %d bytes the system passes in one argument or environment string (%s)", e.What, e.Len, e.Limit, e.Name)
}

// CheckArgs reports whether execve(2) could start inv as [Run] starts
// it: NewArgsCheck(inv.Env).Check(inv).
func (inv *Invocation) CheckArgs() error { return NewArgsCheck(inv.Env).Check(inv) }

// ArgsCheck checks invocations against the system's limits on what
// execve(2) takes, for one base environment (Invocation.Env): on Linux,
// MAX_ARG_STRLEN (32 pages) for each argument or environment string, and
// ARG_MAX (a quarter of the stack limit, between 128 KiB and 6 MiB) for
// all of them with their pointers. An id, a type or a handler name from
// the model is what makes a string too long, and no retry can pass it: a
// caller refuses the run before anything starts.
type ArgsCheck struct {
	strMax, total int
	// baseBytes and baseCount are the base environment as Run passes
	// it: deduplicated, without the OBJGC_* variables Run sets. baseErr
	// is a string of it already too long.
	baseBytes, baseCount int
	baseErr              error
}

// objgcVars are the names of the variables Invocation.env sets.
var objgcVars = func() map[string]bool {
	m := map[string]bool{}
	for _, kv := range (&Invocation{}).env() {
		name, _, _ := strings.Cut(kv, "=")
		m[name] = true
	}
	return m
}()

// NewArgsCheck returns the check of invocations whose Env is env. On a
// system whose limits it does not know, Check always returns nil.
func NewArgsCheck(env []string) *ArgsCheck {
	c := &ArgsCheck{}
	c.strMax, c.total = argLimits()
	for _, kv := range dedupEnv(env) {
		name, _, _ := strings.Cut(kv, "=")
		if objgcVars[name] {
			continue
		}
		c.baseBytes += len(kv) + 1
		c.baseCount++
		if c.strMax > 0 && len(kv)+1 > c.strMax && c.baseErr == nil {
			c.baseErr = &ArgsError{What: envName(name), Len: len(kv) + 1, Limit: c.strMax, Name: "MAX_ARG_STRLEN"}
		}
	}
	return c
}

// Check returns nil when inv (its Env ignored: the check's own is used)
// can be started, else an *ArgsError naming the first string too long,
// or the total. It allocates nothing for an absolute hook path.
func (c *ArgsCheck) Check(inv *Invocation) error {
	if c.strMax <= 0 && c.total <= 0 {
		return nil
	}
	if c.baseErr != nil {
		return c.baseErr
	}
	n, err := c.measure(inv)
	if err != nil {
		return err
	}
	if c.total > 0 && n > c.total {
		return &ArgsError{What: "the arguments and environment", Len: n, Limit: c.total, Name: "ARG_MAX"}
	}
	return nil
}

// measure returns what execve would copy for inv: the file name, each
// string with its NUL and a pointer for each string (fs/exec.c), and
// what a #! script adds (scriptExtra); or the first string longer than
// c.strMax.
func (c *ArgsCheck) measure(inv *Invocation) (int, error) {
	path := absPath(inv.Hook)
	event := inv.event()
	strs := [...]struct {
		what string
		n    int // bytes with the NUL
	}{
		{"the hook's path (argv[0])", len(path) + 1},
		{"", len(event) + 1},
		{"the handler name (argv)", len(inv.Handler) + 1}, // only for a notification
		{"the object id (argv)", len(inv.ObjectID) + 1},
		{"OBJGC_EVENT", len("OBJGC_EVENT=") + len(event) + 1},
		{envName("OBJGC_OBJECT_ID"), len("OBJGC_OBJECT_ID=") + len(inv.ObjectID) + 1},
		{envName("OBJGC_OBJECT_TYPE"), len("OBJGC_OBJECT_TYPE=") + len(inv.ObjectType) + 1},
		{envName("OBJGC_CLASS"), len("OBJGC_CLASS=") + len(inv.Class) + 1},
		{envName("OBJGC_HANDLER"), len("OBJGC_HANDLER=") + len(inv.Handler) + 1},
		{envName("OBJGC_SUBSCRIBER_ID"), len("OBJGC_SUBSCRIBER_ID=") + len(inv.SubscriberID) + 1},
		{"OBJGC_GROUP", len("OBJGC_GROUP=") + len(strconv.Itoa(inv.Group)) + 1},
		{envName("OBJGC_PACKAGE_DIR"), len("OBJGC_PACKAGE_DIR=") + len(absPath(inv.PackageDir)) + 1},
		{"the doomed-ids file's path (OBJGC_DOOMED)", len("OBJGC_DOOMED=") + len(absPath(inv.Doomed)) + 1},
		{"the hook's path (OBJGC_HOOK)", len("OBJGC_HOOK=") + len(path) + 1},
	}
	n := len(path) + 1 + scriptExtra(path) + c.baseBytes + 8*c.baseCount
	for i, s := range strs {
		if i == 2 && inv.Handler == "" {
			continue
		}
		if c.strMax > 0 && s.n > c.strMax {
			return 0, &ArgsError{What: s.what, Len: s.n, Limit: c.strMax, Name: "MAX_ARG_STRLEN"}
		}
		n += s.n + 8
	}
	return n, nil
}

// scriptExtra is what the kernel adds to the strings it copies when the
// hook is a #! script (binfmt_script): the interpreter and its argument,
// from the #! line of at most 256 bytes (BINPRM_BUF_SIZE), and the
// script's path again as an argument. Counted for every hook: it may be
// a script.
func scriptExtra(path string) int { return 256 + len(path) + 1 }

func envName(name string) string {
	switch name {
	case "OBJGC_OBJECT_ID":
		return "the object id (OBJGC_OBJECT_ID)"
	case "OBJGC_OBJECT_TYPE":
		return "the object's type (OBJGC_OBJECT_TYPE)"
	case "OBJGC_HANDLER":
		return "the handler name (OBJGC_HANDLER)"
	case "OBJGC_SUBSCRIBER_ID":
		return "the subscriber id (OBJGC_SUBSCRIBER_ID)"
	case "OBJGC_CLASS":
		return "the class (OBJGC_CLASS)"
	case "OBJGC_PACKAGE_DIR":
		return "the package dir (OBJGC_PACKAGE_DIR)"
	}
	return "the environment variable " + abbrev(name, 64)
}

// dedupEnv keeps the last of each name, as os/exec does with Cmd.Env.
func dedupEnv(env []string) []string {
	last := make(map[string]int, len(env))
	for i, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		last[name] = i
	}
	out := env[:0:0]
	for i, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if last[name] == i {
			out = append(out, kv)
		}
	}
	return out
}

// abbrev returns s when it is at most n bytes, else its first n bytes
// (cut at a rune) and "...".
func abbrev(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
