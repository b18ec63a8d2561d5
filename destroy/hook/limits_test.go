//go:build linux

package hook

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestArgsCheckCountsWhatRunPasses: what measure counts is what Run
// gives execve (argv from args, the environment from env, deduplicated as
// os/exec does), so that the check cannot drift from the invocation.
func TestArgsCheckCountsWhatRunPasses(t *testing.T) {
	env := append(os.Environ(), "OBJGC_OBJECT_ID=stale", "A=1", "A=22")
	for _, inv := range []Invocation{
		{Hook: "/h/t.App/destroy", ObjectID: "app1", ObjectType: "t.App/1.0@p", Class: "t.App", Group: 3, Doomed: "/tmp/d.txt", Env: env},
		{Hook: "/h/t.Env/notify/onX", ObjectID: "app1", ObjectType: "t.App", Class: "t.Env", Handler: "onX", SubscriberID: "env",
			Group: 12, PackageDir: "/cache/p/1.0/x", Doomed: "/tmp/d.txt", Env: env},
	} {
		argv := append([]string{inv.Hook}, inv.args()...)
		strs := append(argv, dedupEnv(inv.env())...)
		want := len(inv.Hook) + 1 + scriptExtra(inv.Hook)
		for _, s := range strs {
			want += len(s) + 1 + 8
		}
		got, err := NewArgsCheck(env).measure(&inv)
		if err != nil || got != want {
			t.Errorf("measure(%s) = %d, %v; want %d", inv.event(), got, err, want)
		}
	}
}

// TestArgsCheckAtTheKernelsLimit runs a real hook with the longest
// object id Linux passes in OBJGC_OBJECT_ID, and with one byte more: the
// check agrees with execve on both sides of MAX_ARG_STRLEN.
func TestArgsCheckAtTheKernelsLimit(t *testing.T) {
	strMax, _ := argLimits()
	hookPath := writeHook(t, t.TempDir(), "t.App/destroy", "exit 0\n")
	longest := strMax - len("OBJGC_OBJECT_ID=") - 1
	for _, n := range []int{longest, longest + 1} {
		inv := Invocation{Hook: hookPath, ObjectID: strings.Repeat("i", n), Env: os.Environ()}
		checked := inv.CheckArgs()
		_, runErr := Run(t.Context(), inv)
		if n == longest {
			if checked != nil || runErr != nil {
				t.Fatalf("id of %d bytes: check %v, run %v; want both nil", n, checked, runErr)
			}
			continue
		}
		var ae *ArgsError
		if !errors.As(checked, &ae) || ae.Name != "MAX_ARG_STRLEN" || ae.Len != strMax+1 || ae.Limit != strMax {
			t.Fatalf("id of %d bytes: check %v; want MAX_ARG_STRLEN, %d bytes of %d", n, checked, strMax+1, strMax)
		}
		if !errors.Is(runErr, syscall.E2BIG) {
			t.Fatalf("id of %d bytes: run %v; want E2BIG, as the check said", n, runErr)
		}
		if want := "the object id (OBJGC_OBJECT_ID) takes "; !strings.HasPrefix(ae.Error(), want) {
			t.Errorf("error %q; want it to begin %q", ae.Error(), want)
		}
	}
}

// TestArgsCheckTotal: strings each short enough that together pass
// ARG_MAX are refused as execve refuses them.
func TestArgsCheckTotal(t *testing.T) {
	strMax, total := argLimits()
	hookPath := writeHook(t, t.TempDir(), "t.App/destroy", "exit 0\n")
	env := os.Environ()
	for used := 0; used <= total; used += strMax / 2 {
		env = append(env, "PAD"+strings.Repeat("x", len(env))+"="+strings.Repeat("p", strMax/2-64))
	}
	inv := Invocation{Hook: hookPath, ObjectID: "app1", Env: env}
	checked := inv.CheckArgs()
	var ae *ArgsError
	if !errors.As(checked, &ae) || ae.Name != "ARG_MAX" {
		t.Fatalf("check %v; want ARG_MAX", checked)
	}
	if _, err := Run(t.Context(), inv); !errors.Is(err, syscall.E2BIG) {
		t.Fatalf("run %v; want E2BIG, as the check said", err)
	}
}

// TestArgsCheckTotalAtItsLimit: an environment that brings the count to
// the check's total exactly still starts a #! script: the check never
// refuses what execve would take... short of its margin for scripts.
func TestArgsCheckTotalAtItsLimit(t *testing.T) {
	strMax, total := argLimits()
	hookPath := writeHook(t, t.TempDir(), "t.App/destroy", "exit 0\n")
	inv := Invocation{Hook: hookPath, ObjectID: "app1", Env: os.Environ()}
	c := NewArgsCheck(inv.Env)
	n, err := c.measure(&inv)
	if err != nil {
		t.Fatal(err)
	}
	// Each pad variable PADk=ppp... adds its length, a NUL and a pointer.
	for k := 0; n < total; k++ {
		name := "PAD" + strconv.Itoa(k) + "="
		size := min(strMax/2, total-n-len(name)-1-8)
		if size < 0 {
			// Too little room left for another variable: grow the last.
			t.Skipf("cannot land on the total exactly (%d of %d)", n, total)
		}
		inv.Env = append(inv.Env, name+strings.Repeat("p", size))
		c = NewArgsCheck(inv.Env)
		if n, err = c.measure(&inv); err != nil {
			t.Fatal(err)
		}
	}
	if n != total {
		t.Fatalf("count %d, want it at the total %d", n, total)
	}
	if err := inv.CheckArgs(); err != nil {
		t.Fatalf("at the total: check %v; want nil", err)
	}
	if _, err := Run(t.Context(), inv); err != nil {
		t.Fatalf("at the check's total, run %v; want the hook to start", err)
	}
	inv.Env[len(inv.Env)-1] += "p"
	var ae *ArgsError
	if err := inv.CheckArgs(); !errors.As(err, &ae) || ae.Name != "ARG_MAX" || ae.Len != total+1 {
		t.Fatalf("one byte past the total: check %v; want ARG_MAX, %d bytes", err, total+1)
	}
}
