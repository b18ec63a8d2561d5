package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"
	"gopkg.in/ini.v1"
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

// readMuranoConfig reads murano-engine's package cache settings from the
// murano.conf at path, resolving them as oslo.config does for the engine:
//
//   - each option is read from [engine], else from its deprecated group
//     [packages_opts]; [engine] wins when both set it, wherever they are in
//     the file;
//   - a key set twice, or a section written twice, keeps the last value;
//     section names are case-insensitive, keys are not;
//   - "#" and ";" start a comment only at the start of a line (a "#" after
//     a value is part of it); surrounding quotes are taken off; an
//     indented line continues the value above;
//   - packages_cache unset or empty is the engine's default,
//     <tempdir>/murano-packages-cache (see engineTempDir);
//     enable_packages_cache is true, 1, on or yes (any case), false, 0,
//     off or no, default true.
//
// What objgc cannot resolve as the engine would is refused with an error
// naming the file and the option: a value using oslo.config's $-
// substitution, a relative packages_cache (the engine makes it absolute
// against its own working directory), a packages_cache of several lines,
// a boolean that is none of the above (the engine would not start).
//
// The file is read with gopkg.in/ini.v1 (sections, keys, Python-style
// multi-line values), not by hand. Only this one file is read: files in a
// murano.conf.d directory that the engine also reads are not.
func readMuranoConfig(path string) (muranoCache, error) {
	data, err := readMuranoFile(path)
	if err != nil {
		return muranoCache{}, err
	}
	f, err := ini.LoadSources(ini.LoadOptions{
		InsensitiveSections:        true,
		IgnoreInlineComment:        true,
		IgnoreContinuation:         true, // a trailing backslash is part of the value
		AllowPythonMultilineValues: true,
		KeyValueDelimiters:         "=:",
	}, data)
	if err != nil {
		return muranoCache{}, fmt.Errorf("reading murano config %s: %w", path, err)
	}
	get := func(name string) (val, where string, ok bool) {
		for _, group := range []string{"engine", "packages_opts"} {
			s, err := f.GetSection(group)
			if err != nil || !s.HasKey(name) {
				continue
			}
			return unquote(strings.TrimSpace(s.Key(name).Value())), "[" + group + "] " + name + " in " + path, true
		}
		return "", "", false
	}
	mc := muranoCache{Enabled: true}
	if val, where, ok := get("enable_packages_cache"); ok {
		switch strings.ToLower(val) {
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
		mc.Dir = filepath.Join(engineTempDir(), "murano-packages-cache")
		mc.From = "murano-engine's default <tempdir>/murano-packages-cache (no [engine] packages_cache in " + path + ")"
	case strings.Contains(val, "$"):
		return muranoCache{}, fmt.Errorf("%s: %q uses oslo.config's $-substitution, which objgc does not resolve; give the cache directory with --cache-dir", where, val)
	case strings.Contains(val, "\n"):
		return muranoCache{}, fmt.Errorf("%s: %q spans several lines: not a directory", where, val)
	case !filepath.IsAbs(val):
		return muranoCache{}, fmt.Errorf("%s: %q is relative: murano-engine resolves it against its own working directory, which objgc does not know; write an absolute path there or give --cache-dir", where, val)
	default:
		mc.Dir, mc.From = filepath.Clean(val), where
	}
	return mc, nil
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

// unquote takes one pair of matching surrounding quotes off s, as
// oslo.config's parser does.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// engineTempDir is Python's tempfile.gettempdir() as far as objgc can
// tell it: TMPDIR, TEMP or TMP from objgc's environment, else /tmp. The
// engine takes them from its own environment, which cron's or a shell's
// need not match (docs/cache.md).
func engineTempDir() string {
	for _, env := range []string{"TMPDIR", "TEMP", "TMP"} {
		if d := os.Getenv(env); d != "" {
			return d
		}
	}
	return "/tmp"
}

// errNoEngineCache is wrapped by the error for a murano.conf whose
// enable_packages_cache is false.
var errNoEngineCache = errors.New("murano-engine keeps no package cache")

// resolveCacheDir returns the package cache root of command c and where
// it came from (settingFrom's words, "" for the default): --cache-dir
// (dir, from any source), --murano-config (muranoConfig: the cache of
// the engine configured there), else the default (cacheDir). Both set is
// a usage error naming both sources: each names the cache, and objgc does
// not guess which one was meant. A murano.conf that switches the
// engine's cache off (enable_packages_cache false) is an error wrapping
// errNoEngineCache: there is nothing there to read or to manage.
func resolveCacheDir(c *cobra.Command, v *viper.Viper, getenv func(string) string, dir, muranoConfig string) (string, string, error) {
	dirFrom := ""
	if dir != "" {
		dirFrom = cacheSettingFrom(c, v, getenv, "cache-dir")
	}
	if muranoConfig == "" {
		d, err := cacheDir(dir)
		return d, dirFrom, err
	}
	mcFrom := cacheSettingFrom(c, v, getenv, "murano-config")
	if dir != "" {
		return "", "", usageErrorf("%s (%s) and %s (%s) both name the package cache; give one of them", dirFrom, dir, mcFrom, muranoConfig)
	}
	mc, err := readMuranoConfig(muranoConfig)
	if err != nil {
		return "", "", err
	}
	if !mc.Enabled {
		return "", "", fmt.Errorf("%s: [engine] enable_packages_cache is false: %w (each deployment unpacks its packages into a directory of its own under %s and deletes it), so there is none to read or manage; leave out --murano-config, or give --cache-dir",
			muranoConfig, errNoEngineCache, mc.Dir)
	}
	return mc.Dir, mc.From, nil
}

// cacheCmdDir is resolveCacheDir for a cache subcommand c, which
// inherits --murano-config from "cache".
func cacheCmdDir(c *cobra.Command, v *viper.Viper, dir string) (string, error) {
	d, _, err := resolveCacheDir(c, v, os.Getenv, dir, c.Flag("murano-config").Value.String())
	return d, err
}

// cacheSettingFrom is settingFrom for a setting that is set, whatever
// its source: "--" + flag when settingFrom cannot tell.
func cacheSettingFrom(c *cobra.Command, v *viper.Viper, getenv func(string) string, flag string) string {
	if v != nil {
		if from := settingFrom(c, v, getenv, flag); from != "" {
			return from
		}
	}
	return "--" + flag
}
