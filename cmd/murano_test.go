package cmd

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// muranoConfCases are murano.conf files and what murano-engine makes of
// them (checked against Murano's own option definitions and oslo.config
// by TestMuranoConfigAgainstOslo). dir "" with err "" is the engine's
// default directory.
var muranoConfCases = []struct {
	name, conf string
	dir        string // packages_cache as the engine reads it
	disabled   bool   // enable_packages_cache false
	err        string // objgc refuses, with an error holding this
	osloErr    bool   // the engine refuses it too
}{
	{name: "engine", conf: "[engine]\npackages_cache = /srv/cache\n", dir: "/srv/cache"},
	{name: "engine wins after", conf: "[engine]\npackages_cache = /a\n[packages_opts]\npackages_cache = /b\n", dir: "/a"},
	{name: "engine wins before", conf: "[packages_opts]\npackages_cache = /b\n[engine]\npackages_cache = /a\n", dir: "/a"},
	{name: "older group", conf: "[packages_opts]\npackages_cache = /b\nenable_packages_cache = false\n", dir: "/b", disabled: true,
		err: "enable_packages_cache is false"},
	{name: "repeated key", conf: "[engine]\npackages_cache = /a\npackages_cache = /c\n", dir: "/c"},
	{name: "repeated section", conf: "[engine]\npackages_cache = /a\n[DEFAULT]\n[engine]\npackages_cache = /d\n", dir: "/d"},
	{name: "inline hash", conf: "[engine]\npackages_cache = /a # not a comment\n", dir: "/a # not a comment"},
	{name: "double quotes", conf: "[engine]\npackages_cache = \"/a b\"\n", dir: "/a b"},
	{name: "single quotes", conf: "[engine]\npackages_cache = '/sq'\n", dir: "/sq"},
	{name: "colon", conf: "[engine]\npackages_cache: /colon\n", dir: "/colon"},
	{name: "section case", conf: "[Engine]\npackages_cache = /upper\n", dir: "/upper"},
	{name: "key case", conf: "[engine]\nPackages_Cache = /upperkey\n"},
	{name: "empty", conf: "[engine]\npackages_cache =\n"},
	{name: "comments", conf: "# [engine]\n; packages_cache = /x\n[engine]\n#packages_cache = /y\n"},
	{name: "default section", conf: "[DEFAULT]\npackages_cache = /default\n"},
	{name: "multi-line", conf: "[engine]\npackages_cache = /a\n  /cont\n", err: "spans several lines"},
	{name: "substitution", conf: "[engine]\npackages_cache = $state_path/x\n", err: "$-substitution", osloErr: true},
	{name: "relative", conf: "[engine]\npackages_cache = relative/dir\n", err: "is relative"},
	{name: "yes", conf: "[engine]\nenable_packages_cache = Yes\n"},
	{name: "off", conf: "[engine]\nenable_packages_cache = off\n", disabled: true, err: "enable_packages_cache is false"},
	{name: "not a boolean", conf: "[engine]\nenable_packages_cache = maybe\n", err: "is not a boolean", osloErr: true},
	{name: "disabled in older group", conf: "[engine]\npackages_cache = /a\n[packages_opts]\nenable_packages_cache = false\n", dir: "/a", disabled: true,
		err: "enable_packages_cache is false"},
}

// TestMuranoConfig: readMuranoConfig's answer for each case, and the
// error for what objgc refuses.
func TestMuranoConfig(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, tc := range muranoConfCases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "murano.conf")
			if err := os.WriteFile(path, []byte(tc.conf), 0o644); err != nil {
				t.Fatal(err)
			}
			mc, err := readMuranoConfig(path)
			if tc.err != "" && !tc.disabled {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), path) {
					t.Fatalf("got %+v, %v; want an error naming %s with %q", mc, err, path, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tc.dir
			if want == "" {
				want = filepath.Join(tmp, "murano-packages-cache")
			}
			if mc.Dir != want || mc.Enabled == tc.disabled {
				t.Fatalf("got %+v, want dir %q, enabled %v", mc, want, !tc.disabled)
			}
		})
	}
}

// TestMuranoConfigAgainstOslo: every case and Debian's murano.conf of
// Murano 14 (murano-common 1:14.0.0-3, testdata) read by Murano's own
// option definitions through oslo.config, in a real Python process: the
// engine reads the same packages_cache and enable_packages_cache as
// objgc, or refuses what objgc refuses for that reason. Skipped outside
// CI when /usr/bin/python3 cannot import murano.
func TestMuranoConfigAgainstOslo(t *testing.T) {
	requireMurano(t)
	dir := t.TempDir()
	var paths []string
	for _, tc := range muranoConfCases {
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".conf")
		if err := os.WriteFile(p, []byte(tc.conf), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	debian, err := filepath.Abs(filepath.Join("testdata", "murano-14.0.0-debian.conf"))
	if err != nil {
		t.Fatal(err)
	}
	paths = append(paths, debian)
	cmd := exec.Command(python3, append([]string{filepath.Join("testdata", "muranoconf.py")}, paths...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(paths) {
		t.Fatalf("%d answers for %d files:\n%s", len(lines), len(paths), out)
	}
	for i, line := range lines {
		var got struct {
			Dir     *string `json:"packages_cache"`
			Enabled bool    `json:"enable_packages_cache"`
			Error   string  `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if i == len(muranoConfCases) {
			mc, err := readMuranoConfig(debian)
			if err != nil || got.Error != "" || got.Dir != nil || !got.Enabled || !mc.Enabled || !strings.HasSuffix(mc.Dir, "/murano-packages-cache") {
				t.Errorf("Debian's murano.conf: objgc %+v, %v; oslo.config %s", mc, err, line)
			}
			continue
		}
		tc := muranoConfCases[i]
		if tc.osloErr {
			if got.Error == "" {
				t.Errorf("%s: the engine accepts it: %s", tc.name, line)
			}
			continue
		}
		engineDir := ""
		if got.Dir != nil {
			engineDir = *got.Dir
		}
		want := tc.dir
		if tc.err == "spans several lines" {
			want = "/a\n/cont"
		}
		if tc.err == "is relative" {
			want = "relative/dir"
		}
		if got.Error != "" || engineDir != want || got.Enabled == tc.disabled {
			t.Errorf("%s: oslo.config says %s; the case says dir %q, enabled %v", tc.name, line, want, !tc.disabled)
		}
	}
}

const python3 = "/usr/bin/python3"

// requireMurano skips the test when /usr/bin/python3 cannot import
// Murano (python3-murano), saying how to install it; under CI=true it
// fails instead.
func requireMurano(t *testing.T) {
	t.Helper()
	out, err := exec.Command(python3, "-c", "import murano.common.config, murano.engine.package_loader").CombinedOutput()
	if err == nil {
		return
	}
	msg := "murano-engine's code is not installed (" + python3 + " cannot import murano: " + lastLine(string(out)) + "); install it with: apt-get install -y python3-murano"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "no output"
	}
	return s
}
