package destroy

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/objgc/objgc/destroy/hook"
	"github.com/objgc/objgc/destroy/order"
)

// HookArgs checks that a hook can be given its arguments and environment
// (hook.ArgsCheck): an id, a type or a handler name longer than the
// system passes in one string (128 KiB on Linux) fails every run of its
// hook with "argument list too long", and no retry passes it. plan warns
// about such a hook (WarnHookCannotRun) and apply refuses to start
// (*HookArgsError). The invocations checked are the ones applyPlan makes.
// Not safe for concurrent use.
type HookArgs struct {
	check *hook.ArgsCheck
	// doomed stands for the doomed-ids file (OBJGC_DOOMED), which
	// exists only once apply runs: the longest name writeDoomedFile
	// gives it.
	doomed string
	// fits records, by hook path and event, whether the hook can be
	// given strings of shortLen bytes each: then every object whose
	// strings are no longer passes without building its invocation (a
	// plan of a million objects checks each one).
	fits map[hookEvent]bool
}

type hookEvent struct{ path, event string }

// shortLen is the length of the strings HookArgs tries once a hook: ids
// and types are far shorter, and the limits far longer.
const shortLen = 4096

// NewHookArgs returns the check of hooks run with env as objgc's own
// environment (ApplyOptions.Env).
func NewHookArgs(env []string) *HookArgs {
	return &HookArgs{check: hook.NewArgsCheck(env), doomed: filepath.Join(os.TempDir(), "objgc-doomed-4294967295.txt"), fits: map[hookEvent]bool{}}
}

// Destroy returns nil, or the *hook.ArgsError of destroy hook f of the
// doomed object id of type typ in group.
func (h *HookArgs) Destroy(f hook.Found, id, typ string, group int) error {
	inv := hookInvocation(f, id, typ, group, h.doomed)
	return h.checkInv(&inv)
}

// Notify returns nil, or the *hook.ArgsError of handler hook f of
// notification n, whose publisher is pubID of type pubType.
func (h *HookArgs) Notify(f hook.Found, pubID, pubType string, n order.Notification) error {
	inv := hookInvocation(f, pubID, pubType, n.Group, h.doomed)
	inv.Handler, inv.SubscriberID = n.Handler, n.Subscriber
	return h.checkInv(&inv)
}

func (h *HookArgs) checkInv(inv *hook.Invocation) error {
	short := len(inv.ObjectID) <= shortLen && len(inv.ObjectType) <= shortLen && len(inv.Handler) <= shortLen && len(inv.SubscriberID) <= shortLen
	if !short {
		return h.check.Check(inv)
	}
	k := hookEvent{inv.Hook, inv.Handler}
	fits, ok := h.fits[k]
	if !ok {
		long := strings.Repeat("x", shortLen)
		probe := *inv
		probe.ObjectID, probe.ObjectType, probe.SubscriberID, probe.Group = long, long, long, math.MaxInt32
		if probe.Handler != "" {
			probe.Handler = long
		}
		fits = h.check.Check(&probe) == nil
		h.fits[k] = fits
	}
	if fits {
		return nil
	}
	return h.check.Check(inv)
}

// hookInvocation is the invocation of hook f for object o (for a
// notification, its publisher) in group, as applyPlan runs it, without its
// stdin, stderr, handler and subscriber.
func hookInvocation(f hook.Found, id, typ string, group int, doomed string) hook.Invocation {
	return hook.Invocation{
		Hook: f.Path, ObjectID: id, ObjectType: typ, Class: f.Class,
		Group: group, PackageDir: f.Source.PackageDir, Doomed: doomed, Dir: f.WorkDir(),
		User: f.Source.User,
	}
}

// HookArgsProblem is a hook that cannot be given its arguments.
type HookArgsProblem struct {
	ID   string // the doomed object (for a notification, the publisher)
	Type string // its type string
	Path string // its JSON path in the snapshot
	Hook string // the hook's path
	// Handler and Subscriber are set for a notification's hook.
	Handler, Subscriber string
	Err                 error // a *hook.ArgsError
}

// Message says which hook cannot run for which object, and why; ids and
// types are cut to 64 bytes (the one that is too long is 128 KiB).
func (p *HookArgsProblem) Message() string {
	if p.Handler != "" {
		return fmt.Sprintf("notify hook %s (%s of %s, for %s) cannot be started: %v", p.Hook, Abbrev(p.Handler), Abbrev(p.Subscriber), Abbrev(p.ID), p.Err)
	}
	return fmt.Sprintf("destroy hook %s of %s %s cannot be started: %v", p.Hook, Abbrev(orNoType(p.Type)), Abbrev(p.ID), p.Err)
}

func orNoType(t string) string {
	if t == "" {
		return "(no type)"
	}
	return t
}

// HookArgsError refuses a run in which a hook cannot be given its
// arguments or environment (HookArgs): nothing was run or written.
type HookArgsError struct {
	Problems []HookArgsProblem
}

func (e *HookArgsError) Error() string {
	shown, more := e.Problems, ""
	if len(shown) > MaxDifferences {
		shown, more = shown[:MaxDifferences], fmt.Sprintf("; and %d more", len(e.Problems)-MaxDifferences)
	}
	msgs := make([]string, len(shown))
	for i := range shown {
		msgs[i] = shown[i].Message()
	}
	return fmt.Sprintf("%d %s cannot be started: %s%s; no hook was run: an id, type or handler name this long cannot reach a hook on this system, correct it in the model (a total past ARG_MAX: raise the stack limit, ulimit -s, or shorten objgc's environment)",
		len(e.Problems), map[bool]string{true: "hook", false: "hooks"}[len(e.Problems) == 1], strings.Join(msgs, "; "), more)
}

// HookWritersError refuses a run in which someone other than the user
// running objgc, or root, could change a hook (hook.CheckWriters):
// nothing was run or written. Problems holds each such hook once.
type HookWritersError struct {
	Problems []error // *hook.WritersError
}

func (e *HookWritersError) Error() string {
	shown, more := e.Problems, ""
	if len(shown) > MaxDifferences {
		shown, more = shown[:MaxDifferences], fmt.Sprintf("; and %d more", len(e.Problems)-MaxDifferences)
	}
	msgs := make([]string, len(shown))
	for i, err := range shown {
		msgs[i] = err.Error()
	}
	hooks := map[string]bool{}
	var chmod, chown []string
	me := 0
	for _, err := range e.Problems {
		we, ok := err.(*hook.WritersError)
		if !ok {
			continue
		}
		hooks[we.Hook] = true
		me = we.Me
		if we.Owner {
			chown = append(chown, shellQuote(we.Path))
		} else {
			chmod = append(chmod, shellQuote(we.Path))
		}
	}
	fix := ""
	if len(e.Problems) > 1 {
		var cmds []string
		if len(chmod) > 0 {
			cmds = append(cmds, "chmod go-w "+strings.Join(chmod, " "))
		}
		if len(chown) > 0 {
			c := fmt.Sprintf("chown %d %s", me, strings.Join(chown, " "))
			if me != 0 {
				c = fmt.Sprintf("(as root) chown %d %s", me, strings.Join(chown, " "))
			}
			cmds = append(cmds, c)
		}
		fix = fmt.Sprintf("; %d paths in all, fixed at once by: %s", len(e.Problems), strings.Join(cmds, " && "))
	}
	n := max(len(hooks), 1)
	return fmt.Sprintf("%d %s not run: %s%s%s; no hook was run (a hook, its hooks dir and every directory between them must be yours or root's, and writable by neither group nor others)",
		n, map[bool]string{true: "hook is", false: "hooks are"}[n == 1], strings.Join(msgs, "; "), more, fix)
}

// shellQuote returns p as one word of a POSIX shell command: as it is
// when it holds only characters no shell reads, else in single quotes.
func shellQuote(p string) string {
	if p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// Abbrev returns s when it is at most 64 bytes, else its first 64 bytes
// (cut at a rune), "..." and its length: for ids and types in messages,
// where one of 128 KiB would bury the rest.
func Abbrev(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	k := n
	for k > 0 && !utf8.RuneStart(s[k]) {
		k--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:k], len(s))
}
