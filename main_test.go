package main

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/objgc/objgc/cmd"
	"github.com/objgc/objgc/internal/earlysignal"
	"github.com/objgc/objgc/internal/golden"
	"github.com/objgc/objgc/internal/lockfile"
	"github.com/objgc/objgc/pkgcache"
)

// TestMain makes the test binary double as objgc: testscript installs it
// as "objgc" in the scripts' PATH, and runs cmd.Main when called so.
//
// The test process itself gets SIGINT's default action back (main.go
// links internal/earlysignal, which catches it from the start).
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) != "objgc" {
		earlysignal.Release()
	}
	testscript.Main(m, map[string]func(){
		"objgc":    func() { os.Exit(cmd.Main(cmd.BuildInfo{Version: "test"}, earlysignal.Interrupts)) },
		"holdlock": func() { os.Exit(holdlockMain()) },
	})
}

// TestScripts runs testdata/script/*.txtar: the real binary on real files,
// with real exit codes. Each script's work directory holds copies of
// testdata/models and testdata/pairs (as models/ and pairs/) so that
// outputs name stable relative paths; $REPO is the repository root.
func TestScripts(t *testing.T) {
	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	fixUmask()
	// Under -update, testscript rewrites a script's expected output
	// when cmp finds it differs; Watch logs what it changed.
	scripts, err := filepath.Glob(filepath.Join("testdata", "script", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	golden.Watch(t, scripts...)
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       golden.Updating(),
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", repo)
			// Each script has a home of its own: a default package cache
			// or configuration directory that one script makes must not
			// reach another (testscript's HOME, /no-home, is shared).
			env.Setenv("HOME", filepath.Join(env.WorkDir, ".home"))
			// Nor the machine's system configuration (an installed
			// package's /etc/objgc/config.yaml): a script that wants one
			// writes it there.
			env.Setenv("OBJGC_SYSTEM_CONFIG", filepath.Join(env.WorkDir, ".etc", "objgc", "config.yaml"))
			// A race-enabled objgc would sleep a second before every
			// successful exit (the race runtime's default).
			env.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			// The hook scripts of testdata/hooks keep their trace and
			// read their orders there.
			env.Setenv("OBJGC_TEST_STATE", filepath.Join(env.WorkDir, "state"))
			var names []string
			for _, kv := range env.Vars {
				if n, _, ok := strings.Cut(kv, "="); ok && n != "" {
					names = append(names, n)
				}
			}
			env.Values[bgEnvKey{}] = names
			env.Values[cacheLocksKey{}] = map[string]func(){}
			for _, dir := range []string{"models", "pairs"} {
				if err := copyDir(filepath.Join(repo, "testdata", dir), filepath.Join(env.WorkDir, dir)); err != nil {
					return err
				}
			}
			return nil
		},
		Cmds: scriptCmds(map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":    cmdExitcode,
			"bigstring":   cmdBigstring,
			"repeat":      cmdRepeat,
			"mkfifo":      cmdMkfifo,
			"unwritable":  cmdUnwritable,
			"usepkg":      cmdUsePackage,
			"zipdir":      cmdZipDir,
			"zipfiles":    cmdZipFiles,
			"cachelock":   cmdCacheLock,
			"cacheunlock": cmdCacheUnlock,
			"unitexec":    cmdUnitexec,
		}),
		Condition: func(cond string) (bool, error) {
			if cond == "unwritable" {
				return canMakeUnwritable(), nil
			}
			if cond == "ci" {
				// On CI (CI=true) a tool a check needs must be there.
				return os.Getenv("CI") == "true", nil
			}
			if cond == "root" {
				// A script can give a file to another user (chown).
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// scriptCmds adds the commands of main_apply_test.go to cmds.
func scriptCmds(cmds map[string]func(ts *testscript.TestScript, neg bool, args []string)) map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	for name, c := range applyCmds {
		cmds[name] = c
	}
	return cmds
}

// cmdExitcode runs a command and asserts its exact exit status:
// exitcode N command [args...]. Its stdout and stderr are kept for the
// stdout, stderr and cmp commands that follow.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode; give the status expected")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	var ee *exec.ExitError
	switch err := ts.Exec(args[1], args[2:]...); {
	case err == nil:
	case errors.As(err, &ee):
		got = ee.ExitCode()
	default:
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// cmdBigstring writes a file holding one JSON string of N MiB:
// bigstring FILE N.
func cmdBigstring(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: bigstring FILE MiB")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 1 {
		ts.Fatalf("bigstring: bad size %q", args[1])
	}
	data := make([]byte, n<<20)
	data[0] = 'a'
	for k := 1; k < len(data); k *= 2 {
		copy(data[k:], data[:k])
	}
	data[0], data[len(data)-1] = '"', '"'
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), data, 0o644))
}

// cmdUsePackage takes the usage lock of a cached package, as a running
// plan or apply does, and holds it until the script ends: usepkg CACHE
// FULLNAME. The lock is a real POSIX record lock (internal/lockfile,
// murano-engine's kind) held by the test process; objgc runs in other
// processes.
func cmdUsePackage(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: usepkg CACHE FULLNAME")
	}
	c, err := pkgcache.OpenExisting(ts.MkAbs(args[0]))
	ts.Check(err)
	s := c.NewSession()
	_, err = s.Package(context.Background(), args[1], "")
	ts.Check(err)
	ts.Defer(s.Close)
}

// cmdRepeat writes a file holding a string repeated N times:
// repeat FILE N STRING.
func cmdRepeat(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: repeat FILE N STRING")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 0 {
		ts.Fatalf("repeat: bad count %q", args[1])
	}
	data := make([]byte, 0, n*len(args[2]))
	for range n {
		data = append(data, args[2]...)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), data, 0o644))
}

// copyDir copies the regular files of src into a new directory dst, each
// writable so that scripts may change them.
func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// cmdZipDir writes a zip archive of a directory with the directory's own
// name as the first path component of every entry, as `zip -r a.zip dir`
// does: zipdir ARCHIVE DIR. With -contents the entries are the
// directory's contents (cd dir && zip -r ../a.zip .), as Murano ships a
// package.
func cmdZipDir(ts *testscript.TestScript, neg bool, args []string) {
	contents := len(args) > 0 && args[0] == "-contents"
	if contents {
		args = args[1:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: zipdir [-contents] ARCHIVE DIR")
	}
	out, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	zw := zip.NewWriter(out)
	root := ts.MkAbs(args[1])
	base := filepath.Dir(root)
	if contents {
		base = root
	}
	ts.Check(filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(base, p)
		if err != nil {
			return err
		}
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}))
	ts.Check(zw.Close())
	ts.Check(out.Close())
}

// cmdZipFiles writes a zip whose entries are named as given, each holding
// a file's bytes: zipfiles ARCHIVE NAME=FILE... A name may be one no zip
// tool would write (../evil), to make the archives objgc must refuse.
func cmdZipFiles(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: zipfiles ARCHIVE NAME=FILE...")
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, a := range args[1:] {
		name, file, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("zipfiles: %q is not NAME=FILE", a)
		}
		data, err := os.ReadFile(ts.MkAbs(file))
		ts.Check(err)
		w, err := zw.Create(name)
		ts.Check(err)
		_, err = w.Write(data)
		ts.Check(err)
	}
	ts.Check(zw.Close())
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), buf.Bytes(), 0o644))
}

type cacheLocksKey struct{}

// cmdCacheLock takes an exclusive lock on FILE as the package cache takes
// its lock files (a POSIX record lock, internal/lockfile), as another
// objgc or murano-engine would hold it: cachelock FILE. It is held until
// cacheunlock FILE or the end of the script.
func cmdCacheLock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: cachelock FILE")
	}
	locks := ts.Value(cacheLocksKey{}).(map[string]func())
	path := ts.MkAbs(args[0])
	if locks[path] != nil {
		ts.Fatalf("cachelock: %s is already locked", args[0])
	}
	unlock, err := lockfile.TryLockPath(path, lockfile.Exclusive)
	ts.Check(err)
	if unlock == nil {
		ts.Fatalf("cachelock: %s is locked by another process", args[0])
	}
	locks[path] = unlock
	ts.Defer(func() {
		if locks[path] != nil {
			locks[path]()
			delete(locks, path)
		}
	})
}

// cmdCacheUnlock lets go of a lock cachelock took: cacheunlock FILE.
func cmdCacheUnlock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: cacheunlock FILE")
	}
	locks := ts.Value(cacheLocksKey{}).(map[string]func())
	path := ts.MkAbs(args[0])
	if locks[path] == nil {
		ts.Fatalf("cacheunlock: %s is not locked", args[0])
	}
	locks[path]()
	delete(locks, path)
}
