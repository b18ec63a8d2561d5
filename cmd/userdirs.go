package cmd

import (
	"errors"
	"path/filepath"
	"runtime"
)

// userConfigDir is os.UserConfigDir reading the environment through
// getenv (IO.Getenv), with the same rules: %AppData% on Windows,
// $HOME/Library/Application Support on macOS, $home/lib on Plan 9, else
// $XDG_CONFIG_HOME when it is an absolute path, else $HOME/.config.
func userConfigDir(getenv func(string) string) (string, error) {
	switch runtime.GOOS {
	case "windows":
		return fromVariable(getenv, "AppData", "")
	case "darwin", "ios":
		return fromVariable(getenv, "HOME", "Library/Application Support")
	case "plan9":
		return fromVariable(getenv, "home", "lib")
	}
	return xdgDir(getenv, "XDG_CONFIG_HOME", ".config")
}

// userCacheDir is os.UserCacheDir reading the environment through
// getenv, with the same rules: %LocalAppData% on Windows,
// $HOME/Library/Caches on macOS, $home/lib/cache on Plan 9, else
// $XDG_CACHE_HOME when it is an absolute path, else $HOME/.cache.
func userCacheDir(getenv func(string) string) (string, error) {
	switch runtime.GOOS {
	case "windows":
		return fromVariable(getenv, "LocalAppData", "")
	case "darwin", "ios":
		return fromVariable(getenv, "HOME", "Library/Caches")
	case "plan9":
		return fromVariable(getenv, "home", "lib/cache")
	}
	return xdgDir(getenv, "XDG_CACHE_HOME", ".cache")
}

// xdgDir is the XDG base directory that variable names when it is an
// absolute path (the specification says to ignore a relative one), else
// $HOME/below.
func xdgDir(getenv func(string) string, variable, below string) (string, error) {
	if d := getenv(variable); d != "" {
		if !filepath.IsAbs(d) {
			return "", errors.New("path in $" + variable + " is relative")
		}
		return d, nil
	}
	return fromVariable(getenv, "HOME", below)
}

// fromVariable is the directory variable names, joined with below; an
// error when the variable is unset or empty.
func fromVariable(getenv func(string) string, variable, below string) (string, error) {
	d := getenv(variable)
	if d == "" {
		return "", errors.New("$" + variable + " is not defined")
	}
	return filepath.Join(d, below), nil
}
