package cmd

import (
	"errors"
	"path/filepath"
	"runtime"
)

// userDir is where os.UserConfigDir or os.UserCacheDir looks on each
// system: the variable on Windows, the folder below $HOME on macOS and
// below $home on Plan 9, and elsewhere the XDG variable when it is an
// absolute path (the specification says to ignore a relative one), else
// the folder below $HOME.
type userDir struct {
	windows, darwin, plan9, xdg, home string
}

var (
	// userConfigDir is os.UserConfigDir's rule.
	userConfigDir = userDir{windows: "AppData", darwin: "Library/Application Support", plan9: "lib", xdg: "XDG_CONFIG_HOME", home: ".config"}
	// userCacheDir is os.UserCacheDir's rule.
	userCacheDir = userDir{windows: "LocalAppData", darwin: "Library/Caches", plan9: "lib/cache", xdg: "XDG_CACHE_HOME", home: ".cache"}
)

// find is the directory of rule d, reading the environment through
// getenv (IO.Getenv) rather than the process's, with the os package's
// errors' meaning: an error when the variable it needs is unset.
func (d userDir) find(getenv func(string) string) (string, error) {
	switch runtime.GOOS {
	case "windows":
		return fromVariable(getenv, d.windows, "")
	case "darwin", "ios":
		return fromVariable(getenv, "HOME", d.darwin)
	case "plan9":
		return fromVariable(getenv, "home", d.plan9)
	}
	if v := getenv(d.xdg); v != "" {
		if !filepath.IsAbs(v) {
			return "", errors.New("path in $" + d.xdg + " is relative")
		}
		return v, nil
	}
	return fromVariable(getenv, "HOME", d.home)
}

// fromVariable is the directory variable names, joined with below; an
// error when the variable is unset or empty.
func fromVariable(getenv func(string) string, variable, below string) (string, error) {
	v := getenv(variable)
	if v == "" {
		return "", errors.New("$" + variable + " is not defined")
	}
	return filepath.Join(v, below), nil
}
