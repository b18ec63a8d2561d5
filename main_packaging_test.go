package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdUnitexec runs the ExecStart= command of a systemd service unit as
// systemd would: with the unit's Environment= values, overridden by the
// KEY=value arguments (what its EnvironmentFile= sets); ${KEY} is one
// word and $KEY is split at white space; /usr/bin/objgc is the scripts'
// objgc. Usage: unitexec UNIT [KEY=value...].
func cmdUnitexec(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: unitexec UNIT [KEY=value...]")
	}
	env, exec := readUnit(ts.MkAbs(args[0]))
	if exec == "" {
		ts.Fatalf("%s has no ExecStart=", args[0])
	}
	for _, kv := range args[1:] {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	var argv []string
	for _, word := range strings.Fields(exec) {
		switch {
		case strings.HasPrefix(word, "${") && strings.HasSuffix(word, "}"):
			argv = append(argv, env[word[2:len(word)-1]])
		case strings.HasPrefix(word, "$"):
			argv = append(argv, strings.Fields(env[word[1:]])...)
		default:
			argv = append(argv, word)
		}
	}
	if argv[0] != "/usr/bin/objgc" {
		ts.Fatalf("ExecStart= runs %s, not /usr/bin/objgc", argv[0])
	}
	ts.Logf("unitexec: %s", strings.Join(argv, " "))
	err := ts.Exec("objgc", argv[1:]...)
	if err != nil && !neg {
		ts.Fatalf("%v", err)
	}
	if err == nil && neg {
		ts.Fatalf("unexpected success")
	}
}

// readUnit returns the Environment= assignments of a unit file (one a
// line, the whole assignment quoted or not) and its ExecStart= command.
func readUnit(path string) (env map[string]string, exec string) {
	data, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	env = map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Environment="); ok {
			k, val, _ := strings.Cut(strings.Trim(v, `"`), "=")
			env[k] = val
		}
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			exec = v
		}
	}
	return env, exec
}

// TestPruneDefaultsDocumented: /etc/default/objgc shows, commented out,
// the values the unit uses when the file sets nothing, and names every
// variable the unit's ExecStart= reads.
func TestPruneDefaultsDocumented(t *testing.T) {
	env, exec := readUnit(filepath.Join("packaging", "systemd", "objgc-prune.service"))
	f, err := os.Open(filepath.Join("packaging", "default", "objgc"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	shown := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "#"), "="); ok && strings.HasPrefix(sc.Text(), "#") && !strings.ContainsAny(k, " \t") {
			shown[k] = v
		}
	}
	for k, v := range env {
		if !strings.Contains(exec, "$"+k) && !strings.Contains(exec, "${"+k+"}") {
			t.Errorf("the unit sets %s, which ExecStart= does not read", k)
		}
		if shown[k] != v {
			t.Errorf("packaging/default/objgc shows #%s=%s, the unit's default is %q", k, shown[k], v)
		}
	}
}

// TestCopyrightNamesEveryModule: packaging/copyright (the .deb's
// /usr/share/doc/objgc/copyright) has a Files stanza for each Go module
// linked into objgc, and none for a module it does not link: the licences
// it lists are those of the binary.
func TestCopyrightNamesEveryModule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	linked := map[string]bool{}
	for _, m := range strings.Fields(string(out)) {
		if m != "github.com/objgc/objgc" {
			linked[m] = true
		}
	}
	data, err := os.ReadFile(filepath.Join("packaging", "copyright"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if f, ok := strings.CutPrefix(line, "Files: "); ok && f != "*" && f != "std/*" {
			listed[strings.TrimSuffix(f, "/*")] = true
		}
	}
	for m := range linked {
		if !listed[m] {
			t.Errorf("objgc links %s, which packaging/copyright does not list (Files: %s/*, with its copyright and licence)", m, m)
		}
	}
	for m := range listed {
		if !linked[m] {
			t.Errorf("packaging/copyright lists %s, which objgc does not link", m)
		}
	}
	if !strings.HasPrefix(string(data), "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n") {
		t.Error("packaging/copyright does not start with the Format line of Debian's machine-readable format")
	}
}
