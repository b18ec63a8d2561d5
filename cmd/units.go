package cmd

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	units "github.com/docker/go-units"
	"github.com/spf13/pflag"
)

// A setting's value is checked by the flag's own pflag.Value: the command
// line, an OBJGC_* variable and the configuration file all reach it
// through Set (setFlags), so that a size or a duration is read and
// refused alike whatever gave it. The types below are those of the cache
// commands' sizes and durations.

// checkedValue is a flag's value that can tell whether a text would
// do, without taking it: checkSetting asks it about a value of the
// configuration file for any command, not only the one run.
type checkedValue interface {
	pflag.Value
	check(s string) error
}

// valueError is a value that a setting's type refused. Its text names
// the flag ("--max-size: ..."); a value from a variable or the file is
// reported after their name (setFlags, checkSetting), one from the
// command line as it is (newRootCmd's flag error function).
type valueError struct{ msg string }

func (e *valueError) Error() string { return e.msg }

func valueErrorf(format string, args ...any) error {
	return &valueError{fmt.Sprintf(format, args...)}
}

// byteSize is a size in bytes that a flag sets; Given is false while it
// holds the flag's default (or nothing).
type byteSize struct {
	Bytes int64
	Given bool
}

// sizeValue is the pflag.Value of a size flag (--max-size,
// --max-unpacked-size): the forms parseSize reads. It keeps the text it
// was set from, which is what help shows as the default.
type sizeValue struct {
	p        *byteSize
	name     string // the flag, for messages
	text     string
	positive bool // zero is refused
	// optional: the flag has no default, and "" leaves it unset.
	optional bool
}

// sizeVar defines a size flag bound to p, set to def unless def is "";
// with positive, zero is refused.
func sizeVar(f *pflag.FlagSet, p *byteSize, name, def string, positive bool, usage string) {
	v := &sizeValue{p: p, name: name, optional: def == ""}
	if def != "" {
		n, err := parseSize(def)
		if err != nil {
			panic(fmt.Sprintf("--%s: default %q: %v", name, def, err))
		}
		p.Bytes, v.text = n, def
	}
	v.positive = positive
	f.Var(v, name, usage)
}

func (v *sizeValue) Set(s string) error {
	n, err := v.parse(s)
	if err != nil {
		return err
	}
	*v.p, v.text = n, s
	return nil
}

func (v *sizeValue) check(s string) error {
	_, err := v.parse(s)
	return err
}

func (v *sizeValue) parse(s string) (byteSize, error) {
	if s == "" && v.optional {
		return byteSize{}, nil
	}
	n, err := parseSize(s)
	if err != nil || (v.positive && n == 0) {
		return byteSize{}, valueErrorf("--%s: %q is not a size such as 500MB or 2GiB", v.name, s)
	}
	return byteSize{Bytes: n, Given: true}, nil
}

func (v *sizeValue) String() string { return v.text }

// Type is "string": help shows the default quoted, as the text it is.
func (v *sizeValue) Type() string { return "string" }

// parseSize reads a byte count with docker's go-units, as docker's own
// flags read one: plain bytes ("1048576"); SI units when the unit is a
// letter and B ("500MB" is 500×10^6; kB, MB, GB, TB, PB); IEC units for
// "KiB", "MiB"... and for a letter alone ("2GiB" and "2G" are 2×2^30, as
// du and docker read 2G). Case is ignored, a fraction is allowed ("1.5G")
// and so is a space before the unit. go-units' FromHumanSize reads every
// unit as SI and RAMInBytes every unit as IEC; the unit's form picks
// between them.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	unit := strings.ToLower(strings.TrimLeft(t, "0123456789. "))
	parse := units.RAMInBytes
	if len(unit) == 2 && unit[1] == 'b' {
		parse = units.FromHumanSize
	}
	n, err := parse(t)
	// A float beyond int64 converts to anything; no cache is 4 EiB.
	if err != nil || n < 0 || n > 1<<62 {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	return n, nil
}

// durationValue is the pflag.Value of every duration setting (apply's
// timeouts, grace and status interval, the download timeouts,
// --unused-for): a Go duration ("720h", "90s") or a number of days
// before one ("30d", "1d12h"), read by parseDays, then checked by
// inRange (durationRule.check for all but --unused-for), whatever gave
// the value: flag, variable or configuration file. It keeps the text it
// was set from, which is what help shows as the default.
type durationValue struct {
	p    *time.Duration
	text string
	// typ is Type's answer: "duration" for apply's flags (help shows
	// the default bare), "string" for the cache commands' (quoted).
	typ string
	// inRange refuses what parseDays could not read (err) or what is
	// out of the flag's range; its errors name the flag.
	inRange func(s string, d time.Duration, err error) error
	// optional: the flag has no default, and "" leaves it unset (0).
	optional bool
}

func (v *durationValue) Set(s string) error {
	d, err := v.parse(s)
	if err != nil {
		return err
	}
	*v.p, v.text = d, s
	return nil
}

func (v *durationValue) check(s string) error {
	_, err := v.parse(s)
	return err
}

func (v *durationValue) parse(s string) (time.Duration, error) {
	if s == "" && v.optional {
		return 0, nil
	}
	d, err := parseDays(s)
	if err := v.inRange(s, d, err); err != nil {
		return 0, err
	}
	return d, nil
}

func (v *durationValue) String() string { return v.text }

// Type is "string" for the cache commands' durations (help shows the
// default quoted, as the text it is), "duration" for apply's.
func (v *durationValue) Type() string {
	if v.typ == "" {
		return "string"
	}
	return v.typ
}

// durationRule is what a duration setting takes: never a negative
// value, zero only when it means something (zero), and nothing above
// zero below floor.
type durationRule struct {
	// zero is what 0 means ("off", "fail at once"); "": 0 is refused.
	zero string
	// floor is the least value above zero: what makes sense for the
	// setting (a status line at most once a second).
	floor time.Duration
	// example is a value to suggest, as "30s".
	example string
}

// check refuses what parseDays could not read (err), and d out of the
// rule's range, naming flag name and the text s given.
func (r durationRule) check(name, s string, d time.Duration, err error) error {
	least := fmt.Sprintf("a duration of at least %s such as %s", r.floor, r.example)
	if r.zero != "" {
		least = fmt.Sprintf("0 (%s) or %s", r.zero, least)
	}
	switch {
	case err != nil:
		if _, ferr := strconv.ParseFloat(s, 64); ferr == nil {
			return valueErrorf("--%s: %s has no unit; write %ss, %sm or %sh", name, s, s, s, s)
		}
		return valueErrorf("--%s: %q is not a duration such as %s", name, s, r.example)
	case d < 0:
		return valueErrorf("--%s: %q is negative; give %s", name, s, least)
	case d == 0 && r.zero == "":
		return valueErrorf("--%s: %q: give %s", name, s, least)
	case d > 0 && d < r.floor:
		return valueErrorf("--%s: %q is less than %s, the least it takes; give %s", name, s, r.floor, least)
	}
	return nil
}

// durationVar defines a duration flag bound to p, set to def, whose
// values rule checks; typ is its Type.
func durationVar(f *pflag.FlagSet, p *time.Duration, name string, def time.Duration, rule durationRule, typ, usage string) {
	*p = def
	f.Var(&durationValue{p: p, text: def.String(), typ: typ, inRange: func(s string, d time.Duration, err error) error {
		return rule.check(name, s, d, err)
	}}, name, usage)
}

// timeoutVar defines a download timeout flag bound to p, set to def: a
// duration above zero, at least a millisecond.
func timeoutVar(f *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	durationVar(f, p, name, def, durationRule{floor: time.Millisecond, example: "30s or 2m"}, "", usage)
}

// unusedForVar defines cache prune's --unused-for, bound to p, which
// stays 0 (no such policy) unless the flag is set: a duration above
// zero. Zero (0, 0s, 0d) is refused rather than read as "every package
// not in use": a template or a script that computes the value and gets 0
// would otherwise empty the cache, and the engine would download every
// package again. Emptying the cache of what is not in use is --max-size
// 0, which says so (docs/cache.md).
func unusedForVar(f *pflag.FlagSet, p *time.Duration, usage string) {
	f.Var(&durationValue{p: p, optional: true, inRange: func(s string, d time.Duration, err error) error {
		switch {
		case err != nil:
			return valueErrorf("--unused-for: %q is not a duration such as 720h or 30d", s)
		case d == 0:
			return valueErrorf("--unused-for: %q would remove every package not in use; give a duration above zero such as 720h or 30d, or --max-size 0 to remove every package not in use", s)
		case d < 0:
			return valueErrorf("--unused-for: %q is negative; give a duration above zero such as 720h or 30d", s)
		}
		return nil
	}}, "unused-for", usage)
}

// parseDays is time.ParseDuration with a number of days allowed before
// the rest: "30d", "1d12h". Neither go-units nor go-humanize reads
// durations (go-units only writes them), and the standard library's
// parser is the one every other duration of objgc goes through; days are
// the one unit it lacks, and the unit a cache's age is counted in.
func parseDays(s string) (time.Duration, error) {
	days, rest, ok := strings.Cut(s, "d")
	if !ok {
		return time.ParseDuration(s)
	}
	n, err := strconv.Atoi(days)
	if err != nil || n > 100000 || n < -100000 {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	d := time.Duration(n) * 24 * time.Hour
	if rest == "" {
		return d, nil
	}
	r, err := time.ParseDuration(rest)
	return d + r, err
}
