package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/objgc/objgc/internal/muranopy"
)

// muranoConfCases are murano.conf files and what murano-engine makes of
// them (checked against Murano's own code and oslo.config by
// TestMuranoConfigAgainstOslo). Each runs on a host of its own under a
// temporary ROOT: murano.conf is ROOT/murano.conf, files are more files
// (oslo.config's default config directories: ROOT/etc stands for /etc,
// ROOT/home is the engine user's HOME), and env is the environment
// (default HOME=ROOT/home, TMPDIR=ROOT/tmp; "-" unsets a variable). "$ROOT"
// in a value stands for ROOT. dir "" with err "" is the engine's default
// directory, ROOT/tmp/murano-packages-cache.
var muranoConfCases = []struct {
	name, conf string
	files      map[string]string
	env        map[string]string
	dir        string // the cache directory as the engine resolves it
	disabled   bool   // enable_packages_cache false
	err        string // objgc refuses, with an error holding this
	osloErr    bool   // the engine refuses it too (it would not start)
	engineDir  string // where objgc refuses and the engine does not: its directory
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
	{name: "one quote", conf: "[engine]\npackages_cache = \"\n"},
	{name: "unmatched quotes", conf: "[engine]\npackages_cache = \"/uq'\n", err: "is relative", engineDir: "$CWD/\"/uq'"},
	{name: "quotes and blanks", conf: "[engine]\npackages_cache =  '/qb'  \t\n", dir: "/qb"},
	{name: "colon", conf: "[engine]\npackages_cache: /colon\n", dir: "/colon"},
	{name: "colon after equals", conf: "[engine]\npackages_cache = /a:b\n", dir: "/a:b"},
	{name: "equals after colon", conf: "[engine]\npackages_cache: /a=b\n", dir: "/a=b"},
	{name: "section case", conf: "[Engine]\npackages_cache = /upper\n", dir: "/upper"},
	{name: "section blanks", conf: "[ engine ]\npackages_cache = /blank\n"},
	{name: "key case", conf: "[engine]\nPackages_Cache = /upperkey\n"},
	{name: "key blanks", conf: "[engine]\npackages_cache\t  =/kb\n", dir: "/kb"},
	{name: "empty", conf: "[engine]\npackages_cache =\n"},
	{name: "comments", conf: "# [engine]\n; packages_cache = /x\n[engine]\n#packages_cache = /y\n"},
	{name: "default section", conf: "[DEFAULT]\npackages_cache = /default\n"},
	{name: "CRLF", conf: "[engine]\r\npackages_cache = /crlf\r\n", dir: "/crlf"},
	{name: "CR", conf: "[engine]\rpackages_cache = /cr\r", dir: "/cr"},
	{name: "Python blanks", conf: "[engine]\npackages_cache = /pyblank\x1c\u00a0\n\x0c\n", dir: "/pyblank"},
	{name: "normalised", conf: "[engine]\npackages_cache = /a/./b/../c/\n", dir: "/a/c"},
	{name: "multi-line", conf: "[engine]\npackages_cache = /a\n  /cont\n", err: "spans several lines", engineDir: "/a\n/cont"},
	{name: "multi-line comment", conf: "[engine]\npackages_cache = /a\n\t# note\n", err: "spans several lines", engineDir: "/a\n# note"},
	{name: "blank line ends a value", conf: "[engine]\npackages_cache = /a\n\nenable_packages_cache = false\n", dir: "/a", disabled: true,
		err: "enable_packages_cache is false"},
	{name: "substitution", conf: "[engine]\npackages_cache = $state_path/x\n", err: "$-substitution", osloErr: true},
	{name: "relative", conf: "[engine]\npackages_cache = relative/dir\n", err: "is relative", engineDir: "$CWD/relative/dir"},
	{name: "yes", conf: "[engine]\nenable_packages_cache = Yes\n"},
	{name: "off", conf: "[engine]\nenable_packages_cache = off\n", disabled: true, err: "enable_packages_cache is false"},
	{name: "not a boolean", conf: "[engine]\nenable_packages_cache = maybe\n", err: "is not a boolean", osloErr: true},
	{name: "disabled in older group", conf: "[engine]\npackages_cache = /a\n[packages_opts]\nenable_packages_cache = false\n", dir: "/a", disabled: true,
		err: "enable_packages_cache is false"},

	// What oslo.config's parser refuses: the engine does not start.
	{name: "no assignment", conf: "[engine]\npackages_cache\n", err: "no ':' or '='", osloErr: true},
	{name: "empty key", conf: "[engine]\n= /x\n", err: "empty key", osloErr: true},
	{name: "unexpected continuation", conf: "[engine]\n  packages_cache = /x\n", err: "continuation line", osloErr: true},
	{name: "continuation after a comment", conf: "[engine]\npackages_cache = /a\n# c\n  /b\n", err: "continuation line", osloErr: true},
	{name: "unclosed section", conf: "[engine\npackages_cache = /x\n", err: "section", osloErr: true},
	{name: "section and comment", conf: "[engine] # cache\npackages_cache = /x\n", err: "section", osloErr: true},
	{name: "empty section name", conf: "[]\npackages_cache = /x\n", err: "empty section name", osloErr: true},
	{name: "no section", conf: "packages_cache = /x\n[engine]\n", err: "before any section", osloErr: true},
	{name: "byte order mark", conf: "\ufeff[engine]\npackages_cache = /bom\n", err: "no ':' or '='", osloErr: true},
	{name: "not UTF-8", conf: "[engine]\npackages_cache = /\xff\n", err: "UTF-8", osloErr: true},

	// The default config directories, read without --config-dir.
	{name: "conf.d", conf: "[engine]\nenable_packages_cache = true\n",
		files: map[string]string{"etc/murano/murano.conf.d/50-cache.conf": "[engine]\npackages_cache = /fromdir\n"}, dir: "/fromdir"},
	{name: "the file wins over conf.d", conf: "[engine]\npackages_cache = /main\n",
		files: map[string]string{"etc/murano/murano.conf.d/50-cache.conf": "[engine]\npackages_cache = /fromdir\n"}, dir: "/main"},
	{name: "the file's older group wins over conf.d", conf: "[packages_opts]\npackages_cache = /old\n",
		files: map[string]string{"etc/murano/murano.conf.d/50-cache.conf": "[engine]\npackages_cache = /fromdir\n"}, dir: "/old"},
	{name: "conf.d sorted", conf: "",
		files: map[string]string{
			"etc/murano/murano.conf.d/20-b.conf": "[engine]\npackages_cache = /b\n",
			"etc/murano/murano.conf.d/10-a.conf": "[engine]\npackages_cache = /a\n",
			"etc/murano/murano.conf.d/9-c.conf":  "[engine]\npackages_cache = /c\n",
		}, dir: "/c"},
	{name: "conf.d later file's older group wins", conf: "",
		files: map[string]string{
			"etc/murano/murano.conf.d/a.conf": "[engine]\npackages_cache = /a\n",
			"etc/murano/murano.conf.d/b.conf": "[packages_opts]\npackages_cache = /b\n",
		}, dir: "/b"},
	{name: "conf.d other names", conf: "",
		files: map[string]string{
			"etc/murano/murano.conf.d/.hidden.conf": "[engine]\npackages_cache = /hidden\n",
			"etc/murano/murano.conf.d/x.conf.bak":   "[engine]\npackages_cache = /bak\n",
			"etc/murano/murano.conf.d/sub/y.conf":   "[engine]\npackages_cache = /sub\n",
		}},
	{name: "conf.d a directory", conf: "",
		files: map[string]string{"etc/murano/murano.conf.d/d.conf/x": ""}, err: "d.conf", osloErr: true},
	{name: "conf.d disables", conf: "[engine]\npackages_cache = /main\n",
		files: map[string]string{"etc/murano/murano.conf.d/off.conf": "[engine]\nenable_packages_cache = false\n"}, dir: "/main", disabled: true,
		err: "enable_packages_cache is false"},
	{name: "conf.d unparsable", conf: "[engine]\npackages_cache = /main\n",
		files: map[string]string{"etc/murano/murano.conf.d/bad.conf": "[engine]\npackages_cache\n"}, err: "bad.conf", osloErr: true},
	{name: "conf.d in home first", conf: "",
		files: map[string]string{
			"home/.murano/murano.conf.d/a.conf": "[engine]\npackages_cache = /home\n",
			"etc/murano/murano.conf.d/b.conf":   "[engine]\npackages_cache = /etc\n",
		}, dir: "/home"},
	{name: "conf.d first found only", conf: "",
		files: map[string]string{
			"home/murano.conf.d/.keep":        "",
			"etc/murano/murano.conf.d/b.conf": "[engine]\npackages_cache = /etc\n",
		}},
	{name: "conf.d in etc", conf: "",
		files: map[string]string{"etc/murano.conf.d/a.conf": "[engine]\npackages_cache = /etcroot\n"}, dir: "/etcroot"},
	{name: "conf.d of the program", conf: "",
		files: map[string]string{
			"etc/murano-engine.conf.d/a.conf": "[engine]\npackages_cache = /prog\n",
			"etc/murano/murano.conf.d/z.conf": "[engine]\npackages_cache = /project\n",
		}, dir: "/prog"},
	{name: "conf.d of a snap", conf: "",
		files: map[string]string{"snap/etc/murano/murano.conf.d/a.conf": "[engine]\npackages_cache = /snap\n"},
		env:   map[string]string{"SNAP_COMMON": "$ROOT/snap"}, dir: "/snap"},
	{name: "default files not read", conf: "",
		files: map[string]string{"etc/murano/murano-engine.conf": "[engine]\npackages_cache = /deffile\n"}},

	// tempfile.gettempdir(): the first of TMPDIR, TEMP, TMP, /tmp,
	// /var/tmp, /usr/tmp and the working directory that is a directory
	// one can create files in.
	{name: "TMPDIR missing", env: map[string]string{"TMPDIR": "$ROOT/missing"}, dir: "/tmp/murano-packages-cache"},
	{name: "TMPDIR a file", files: map[string]string{"file": "x"}, env: map[string]string{"TMPDIR": "$ROOT/file"}, dir: "/tmp/murano-packages-cache"},
	{name: "TEMP", files: map[string]string{"temp/.keep": ""}, env: map[string]string{"TMPDIR": "-", "TEMP": "$ROOT/temp"},
		dir: "$ROOT/temp/murano-packages-cache"},
	{name: "TMP after a missing TEMP", files: map[string]string{"t/.keep": ""}, env: map[string]string{"TMPDIR": "", "TEMP": "$ROOT/none", "TMP": "$ROOT/t"},
		dir: "$ROOT/t/murano-packages-cache"},
	{name: "TMPDIR not clean", env: map[string]string{"TMPDIR": "$ROOT/tmp/../tmp/"}, dir: "$ROOT/tmp/murano-packages-cache"},
}

// muranoCaseHost writes case tc's files under a new root and returns the
// path of its murano.conf, the host objgc reads it on and the
// environment of that host.
func muranoCaseHost(t *testing.T, i int) (path string, h engineHost, env map[string]string) {
	t.Helper()
	tc := muranoConfCases[i]
	root := t.TempDir()
	env = map[string]string{"HOME": root + "/home", "TMPDIR": root + "/tmp"}
	for k, v := range tc.env {
		if v == "-" {
			delete(env, k)
			continue
		}
		env[k] = strings.ReplaceAll(v, "$ROOT", root)
	}
	for _, d := range []string{"home", "tmp", "etc"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range tc.files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path = filepath.Join(root, "murano.conf")
	if err := os.WriteFile(path, []byte(tc.conf), 0o644); err != nil {
		t.Fatal(err)
	}
	h = engineHost{Getenv: func(k string) string { return env[k] }, Etc: filepath.Join(root, "etc")}
	return path, h, env
}

// muranoCaseDir is what case tc's dir (or want) names on the host under root.
func muranoCaseDir(want, root string) string {
	if want == "" {
		return filepath.Join(root, "tmp", "murano-packages-cache")
	}
	return strings.ReplaceAll(want, "$ROOT", root)
}

// TestMuranoConfig: readMuranoConfigOn's answer for each case, and the
// error for what objgc refuses.
func TestMuranoConfig(t *testing.T) {
	for i, tc := range muranoConfCases {
		t.Run(tc.name, func(t *testing.T) {
			path, h, _ := muranoCaseHost(t, i)
			root := filepath.Dir(path)
			mc, err := readMuranoConfigOn(path, h)
			if tc.err != "" && !tc.disabled {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), root) {
					t.Fatalf("got %+v, %v; want an error naming a file under %s with %q", mc, err, root, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := muranoCaseDir(tc.dir, root)
			if mc.Dir != want || mc.Enabled == tc.disabled {
				t.Fatalf("got %+v, want dir %q, enabled %v", mc, want, !tc.disabled)
			}
		})
	}
}

// TestMuranoConfigAgainstOslo: every case and Debian's murano.conf of
// Murano 14 (murano-common 1:14.0.0-3, testdata) read by Murano's own
// code in a real Python process (testdata/muranoconf.py: parse_args as
// murano-engine calls it, oslo.config finding its default config
// directories, ApiPackageLoader._get_cache_directory): the engine
// resolves the same cache directory and enable_packages_cache as objgc,
// or refuses what objgc refuses for that reason. Skipped outside CI when
// /usr/bin/python3 cannot import murano.
func TestMuranoConfigAgainstOslo(t *testing.T) {
	requireMurano(t)
	type job struct {
		Path string            `json:"path"`
		Etc  string            `json:"etc"`
		Env  map[string]string `json:"env"`
	}
	var jobs []job
	for i := range muranoConfCases {
		path, h, env := muranoCaseHost(t, i)
		jobs = append(jobs, job{path, h.Etc, env})
	}
	debian, err := filepath.Abs(filepath.Join("testdata", "murano-14.0.0-debian.conf"))
	if err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	debianEnv := map[string]string{"HOME": empty, "TMPDIR": empty}
	jobs = append(jobs, job{debian, filepath.Join(empty, "etc"), debianEnv})
	in, err := json.Marshal(jobs)
	if err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	script, err := filepath.Abs(filepath.Join("testdata", "muranoconf.py"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python3, "-W", "ignore", script)
	cmd.Dir = cwd
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(jobs) {
		t.Fatalf("%d answers for %d files:\n%s", len(lines), len(jobs), out)
	}
	for i, line := range lines {
		var got struct {
			Dir     string `json:"packages_cache"`
			Enabled bool   `json:"enable_packages_cache"`
			Error   string `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if i == len(muranoConfCases) {
			mc, err := readMuranoConfigOn(debian, engineHost{Getenv: func(k string) string { return debianEnv[k] }, Etc: filepath.Join(empty, "etc")})
			if err != nil || got.Error != "" || got.Dir != mc.Dir || !got.Enabled || !mc.Enabled || mc.Dir != filepath.Join(empty, "murano-packages-cache") {
				t.Errorf("Debian's murano.conf: objgc %+v, %v; oslo.config %s", mc, err, line)
			}
			continue
		}
		tc := muranoConfCases[i]
		root := filepath.Dir(jobs[i].Path)
		if tc.osloErr {
			if got.Error == "" {
				t.Errorf("%s: the engine accepts it: %s", tc.name, line)
			}
			continue
		}
		want := muranoCaseDir(tc.dir, root)
		if tc.engineDir != "" {
			want = strings.ReplaceAll(tc.engineDir, "$CWD", cwd)
		}
		if got.Error != "" || got.Dir != want || got.Enabled == tc.disabled {
			t.Errorf("%s: the engine says %s; the case says dir %q, enabled %v", tc.name, line, want, !tc.disabled)
		}
	}
}

const python3 = muranopy.Python

// requireMurano skips (under CI=true: fails) the test when Murano's
// engine code is not installed.
func requireMurano(t *testing.T) {
	muranopy.Require(t, "import murano.common.config, murano.engine.package_loader")
}
