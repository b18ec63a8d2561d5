package cmd

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// maxMuranoConfig bounds how much of a murano.conf is read: the file
// Debian ships is about 70 KB.
const maxMuranoConfig = 16 << 20

// muranoCache is what a murano.conf says about murano-engine's package
// cache (Murano 14, murano/common/config.py, the engine options
// packages_cache and enable_packages_cache, and
// murano/engine/package_loader.py, ApiPackageLoader._get_cache_directory).
type muranoCache struct {
	Dir string // the cache root, absolute
	// From says where Dir came from: "[engine] packages_cache in FILE",
	// "[packages_opts] packages_cache in FILE", or the engine's default.
	From string
	// Enabled is [engine] enable_packages_cache (default true). When false
	// the engine unpacks each deployment's packages into a directory of
	// its own under Dir and deletes it afterwards: no cache to manage.
	Enabled bool
}

// engineHost is what murano-engine's reading of murano.conf depends on
// besides the file: its environment (HOME, TMPDIR, TEMP, TMP, SNAP,
// SNAP_COMMON), where /etc is (tests move it) and its working directory.
// objgc takes its own for the engine's (docs/config.md says where they
// may differ).
type engineHost struct {
	Getenv func(string) string
	Etc    string // "/etc"
	// Getwd is the working directory, nil for os.Getwd.
	Getwd func() (string, error)
}

// hostOf is the host objgc runs on, as engineHost, with the
// environment getenv reads (IO.Getenv).
func hostOf(getenv func(string) string) engineHost {
	return engineHost{Getenv: getenv, Etc: "/etc"}
}

func (h engineHost) getwd() (string, error) {
	if h.Getwd != nil {
		return h.Getwd()
	}
	return os.Getwd()
}

// muranoEngineProg is the name murano-engine runs under (sys.argv[0]),
// from which oslo.config names one of its default config directories.
const muranoEngineProg = "murano-engine"

// readMuranoConfig is readMuranoConfigOn for the host objgc runs on,
// whose environment getenv reads.
func readMuranoConfig(path string, getenv func(string) string) (muranoCache, error) {
	return readMuranoConfigOn(path, hostOf(getenv))
}

// readMuranoConfigOn reads murano-engine's package cache settings as the
// engine resolves them on host h when started, as Debian's
// murano-engine.service starts it, with --config-file path and no
// --config-dir (Murano 14, murano/common/config.py parse_args,
// oslo.config's ConfigOpts._parse_config_files):
//
//   - the files read are the *.conf files (sorted by name, no hidden
//     ones) of oslo.config's default config directories for project
//     murano and program murano-engine (find_config_dirs): the first of
//     ~/.murano/murano.conf.d, ~/murano.conf.d,
//     /etc/murano/murano.conf.d, /etc/murano.conf.d (and the snap
//     directories when SNAP_COMMON or SNAP is set) that exists, then the
//     first murano-engine.conf.d in the same places (~ is HOME); then
//     path, which oslo.config reads last, when it parses the command
//     line. A later file wins;
//   - within a file, each option is read from [engine], else from its
//     deprecated group [packages_opts]; a key set twice keeps the last
//     value; every file is read as oslo.config's parser reads it
//     (parseOslo), and one it refuses is refused here;
//   - packages_cache unset or empty is the engine's default,
//     <tempdir>/murano-packages-cache (engineHost.tempDir: Python's
//     tempfile.gettempdir()); the directory is made absolute and
//     normalised as ApiPackageLoader._get_cache_directory does
//     (os.path.abspath); enable_packages_cache is true, 1, on or yes (any
//     case), false, 0, off or no (oslo.config's Boolean), default true.
//
// What objgc cannot resolve as the engine would is refused with an error
// naming the file and the option: a value using oslo.config's $-
// substitution, a relative packages_cache (the engine makes it absolute
// against its own working directory), a packages_cache of several lines,
// a boolean that is none of the above (the engine would not start), a
// default config directory objgc cannot list.
func readMuranoConfigOn(path string, h engineHost) (muranoCache, error) {
	paths, err := h.muranoConfigFiles(path)
	if err != nil {
		return muranoCache{}, err
	}
	files := make([]*osloFile, 0, len(paths))
	for _, p := range paths {
		data, err := readMuranoFile(p)
		if err != nil {
			return muranoCache{}, err
		}
		f, err := parseOslo(p, data)
		if err != nil {
			return muranoCache{}, err
		}
		files = append(files, f)
	}
	// oslo.config's _Namespace._get_file_value: the files newest first,
	// and in each the option's group before its deprecated one.
	get := func(name string) (val, where string, ok bool) {
		for i := len(files) - 1; i >= 0; i-- {
			for _, group := range []string{"engine", "packages_opts"} {
				if v, ok := files[i].value(group, name); ok {
					return v, "[" + group + "] " + name + " in " + files[i].path, true
				}
			}
		}
		return "", "", false
	}
	mc := muranoCache{Enabled: true}
	if val, where, ok := get("enable_packages_cache"); ok {
		switch pyLower(val) {
		case "true", "1", "on", "yes":
		case "false", "0", "off", "no":
			mc.Enabled = false
		default:
			return muranoCache{}, fmt.Errorf("%s: %q is not a boolean (true or false); murano-engine would not start with it", where, val)
		}
	}
	val, where, ok := get("packages_cache")
	switch {
	case !ok || val == "":
		tmp, err := h.tempDir()
		if err != nil {
			return muranoCache{}, fmt.Errorf("murano config %s: no packages_cache, and %w", path, err)
		}
		mc.Dir = pyNormpath(tmp + "/murano-packages-cache")
		mc.From = "murano-engine's default <tempdir>/murano-packages-cache (no [engine] packages_cache in " + strings.Join(paths, ", ") + ")"
	case strings.Contains(val, "$"):
		return muranoCache{}, fmt.Errorf("%s: %q uses oslo.config's $-substitution, which objgc does not resolve; give the cache directory with --cache-dir", where, val)
	case strings.Contains(val, "\n"):
		return muranoCache{}, fmt.Errorf("%s: %q spans several lines: not a directory", where, val)
	case !strings.HasPrefix(val, "/"):
		return muranoCache{}, fmt.Errorf("%s: %q is relative: murano-engine resolves it against its own working directory, which objgc does not know; write an absolute path there or give --cache-dir", where, val)
	default:
		mc.Dir, mc.From = pyNormpath(val), where
	}
	return mc, nil
}

// muranoConfigFiles returns the files murano-engine reads when started
// with --config-file path, in the order read, the last winning: the
// *.conf files of oslo.config's default config directories (see
// readMuranoConfigOn), then path.
func (h engineHost) muranoConfigFiles(path string) ([]string, error) {
	home := h.Getenv("HOME")
	if home == "" {
		if u, err := user.Current(); err == nil {
			home = u.HomeDir
		}
	}
	wd, _ := h.getwd()
	// os.path.expanduser("~/.murano") and ("~"): HOME without its
	// trailing slashes, then the rest; "~" alone is at least "/".
	home = strings.TrimRight(home, "/")
	dirs := []string{pyAbspath(home+"/.murano", wd), pyAbspath(cmp.Or(home, "/"), wd), h.Etc + "/murano", h.Etc}
	if d := h.Getenv("SNAP_COMMON"); d != "" {
		dirs = append(dirs, d+"/etc/murano")
	}
	if d := h.Getenv("SNAP"); d != "" {
		dirs = append(dirs, d+"/etc/murano")
	}
	var files []string
	for _, base := range []string{"murano", muranoEngineProg} {
		for _, d := range dirs {
			dir := strings.TrimSuffix(d, "/") + "/" + base + ".conf.d"
			if _, err := os.Stat(dir); err != nil {
				continue
			}
			entries, err := os.ReadDir(dir)
			if err != nil && !errors.Is(err, syscall.ENOTDIR) {
				return nil, fmt.Errorf("murano config %s: listing %s, which murano-engine reads too: %w", path, dir, unwrapPath(err))
			}
			var names []string
			for _, e := range entries {
				// Python's glob("*.conf"): no hidden names.
				if n := e.Name(); !strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".conf") {
					names = append(names, n)
				}
			}
			slices.Sort(names)
			for _, n := range names {
				files = append(files, dir+"/"+n)
			}
			break
		}
	}
	// --config-file is parsed after the default directories: it wins.
	return append(files, path), nil
}

// tempDir is Python's tempfile.gettempdir() on h: the first of TMPDIR,
// TEMP, TMP, /tmp, /var/tmp, /usr/tmp and the working directory that is
// a directory in which the user running objgc can create a file
// (tempDirUsable), made absolute and normalised (os.path.abspath).
func (h engineHost) tempDir() (string, error) {
	var candidates []string
	for _, env := range []string{"TMPDIR", "TEMP", "TMP"} {
		if d := h.Getenv(env); d != "" {
			candidates = append(candidates, d)
		}
	}
	candidates = append(candidates, "/tmp", "/var/tmp", "/usr/tmp")
	wd, err := h.getwd()
	if err == nil {
		candidates = append(candidates, wd)
	}
	for _, d := range candidates {
		d = pyAbspath(d, wd)
		if tempDirUsable(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("no usable temporary directory: none of %s is a directory one can create files in (Python's tempfile.gettempdir() would fail too)", strings.Join(candidates, ", "))
}

// pyAbspath is Python's os.path.abspath on a POSIX system: p joined to
// the working directory wd when relative, then pyNormpath.
func pyAbspath(p, wd string) string {
	if !strings.HasPrefix(p, "/") {
		p = wd + "/" + p
	}
	return pyNormpath(p)
}

// pyNormpath is Python's posixpath.normpath of an absolute path:
// filepath.Clean, except that exactly two leading slashes stay (POSIX
// leaves their meaning to the system).
func pyNormpath(p string) string {
	c := filepath.Clean(p)
	if strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "///") {
		if c == "/" {
			return "//"
		}
		return "/" + c
	}
	return c
}

// readMuranoFile reads at most maxMuranoConfig bytes of the regular file
// at path, without waiting on a named pipe.
func readMuranoFile(path string) ([]byte, error) {
	f, err := openConfigFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading murano config %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading murano config %s: %w", path, unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("murano config %s: not a regular file (%s)", path, fileKind(st.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxMuranoConfig+1))
	if err != nil {
		return nil, fmt.Errorf("reading murano config %s: %w", path, unwrapPath(err))
	}
	if len(data) > maxMuranoConfig {
		return nil, fmt.Errorf("murano config %s: larger than %d MiB: not a murano.conf", path, maxMuranoConfig>>20)
	}
	return data, nil
}

// errNoEngineCache is wrapped by the error for a murano.conf whose
// enable_packages_cache is false.
var errNoEngineCache = errors.New("murano-engine keeps no package cache")

// cacheDir returns the package cache root of the command and where it
// came from (from's words, "" for the default): --cache-dir (dir, from
// any source), --murano-config (muranoConfig: the cache of the engine
// configured there), else the default (defaultCacheDir). Both set is
// a usage error naming both sources: each names the cache, and objgc does
// not guess which one was meant. A murano.conf that switches the
// engine's cache off (enable_packages_cache false) is an error wrapping
// errNoEngineCache: there is nothing there to read or to manage.
func (cfg *config) cacheDir(dir, muranoConfig string) (string, string, error) {
	dirFrom := ""
	if dir != "" {
		dirFrom = cfg.setFrom("cache-dir")
	}
	if muranoConfig == "" {
		if dir != "" {
			return dir, dirFrom, nil
		}
		d, err := cfg.defaultCacheDir()
		return d, "", err
	}
	mcFrom := cfg.setFrom("murano-config")
	if dir != "" {
		return "", "", usageErrorf("%s (%s) and %s (%s) both name the package cache; give one of them", dirFrom, dir, mcFrom, muranoConfig)
	}
	mc, err := readMuranoConfig(muranoConfig, cfg.getenv)
	if err != nil {
		return "", "", err
	}
	if !mc.Enabled {
		return "", "", fmt.Errorf("%s: [engine] enable_packages_cache is false: %w (each deployment unpacks its packages into a directory of its own under %s and deletes it), so there is none to read or manage; leave out --murano-config, or give --cache-dir",
			muranoConfig, errNoEngineCache, mc.Dir)
	}
	return mc.Dir, mc.From, nil
}

// setFrom is from for a setting that is set, whatever its source:
// "--" + flag when from cannot tell.
func (cfg *config) setFrom(flag string) string {
	if from := cfg.from(flag); from != "" {
		return from
	}
	return "--" + flag
}
