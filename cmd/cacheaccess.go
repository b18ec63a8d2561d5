package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"

	"github.com/objgc/objgc/pkgcache"
)

// defaultMuranoConfig is where Debian and RDO install murano-engine's
// configuration, and what the package's /etc/objgc/config.yaml names.
const defaultMuranoConfig = "/etc/murano/murano.conf"

// openExistingCache is pkgcache.OpenExisting (or OpenForMigrate, when
// migrate) for the cache commands, with the errors an operator acts on:
// a cache the user running objgc may not read is said to be one
// (cacheAccessError), not "no package cache"; and when there is none,
// the error says where murano-engine's cache is when murano.conf is on
// this host (noCacheHint). The environment is read through streams.
func openExistingCache(streams *IO, dir string, migrate bool) (*pkgcache.Cache, error) {
	if err := cacheAccessError(dir); err != nil {
		return nil, err
	}
	open := pkgcache.OpenExisting
	if migrate {
		open = pkgcache.OpenForMigrate
	}
	c, err := open(dir)
	if errors.Is(err, pkgcache.ErrNoCache) {
		if hint := noCacheHint(dir, defaultMuranoConfig, streams.Getenv); hint != "" {
			return nil, fmt.Errorf("%w; %s", err, hint)
		}
	}
	return c, err
}

// cacheAccessError returns an error when the user running objgc may not
// reach, list or enter the package cache directory dir; nil when it may,
// or when dir does not exist (which is no package cache). The error
// names the directory, the user and, where it can be seen, the
// directory's owner and mode: a cache someone else keeps private is not
// a missing cache, and "objgc cache add creates one" would invite a
// second cache.
func cacheAccessError(dir string) error {
	abs := absPath(dir)
	st, err := os.Stat(abs)
	if err == nil && st.IsDir() {
		var f *os.File
		if f, err = os.Open(abs); err == nil {
			_, err = f.Readdirnames(1)
			f.Close()
			if err == io.EOF {
				err = nil
			}
		}
		if err == nil {
			// Entering needs search permission, which listing does not.
			if _, err = os.Lstat(abs + string(filepath.Separator) + "."); errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		}
	}
	if !errors.Is(err, fs.ErrPermission) {
		return nil
	}
	who := "you"
	if u, err := user.Current(); err == nil {
		who = "user " + u.Username + " (uid " + u.Uid + ")"
	}
	if st == nil {
		return fmt.Errorf("package cache %s: permission denied: %s may not reach it (a directory above it does not let you in); run objgc as the cache's owner or as root", abs, who)
	}
	owner := "its owner"
	if uid, ok := fileUID(st); ok {
		owner = strconv.Itoa(uid)
		if u, err := user.LookupId(owner); err == nil {
			owner = u.Username
		}
		return fmt.Errorf("package cache %s: permission denied: %s may not read it (owner %s, mode %s); run objgc as its owner (sudo -u %s objgc ...) or as root",
			abs, who, owner, st.Mode(), owner)
	}
	return fmt.Errorf("package cache %s: permission denied: %s may not read it (mode %s); run objgc as its owner or as root", abs, who, st.Mode())
}

// noCacheHint returns, for a directory dir that holds no package cache,
// where murano-engine's cache is when its configuration muranoConf
// exists on this host and names another directory; "" otherwise.
func noCacheHint(dir, muranoConf string, getenv func(string) string) string {
	if _, err := os.Stat(muranoConf); err != nil {
		return ""
	}
	mc, err := readMuranoConfig(muranoConf, getenv)
	switch {
	case err != nil:
		return fmt.Sprintf("murano-engine's configuration %s is on this host: for its cache give --murano-config %s", muranoConf, muranoConf)
	case mc.Dir == absPath(dir):
		return ""
	}
	return fmt.Sprintf("murano-engine's cache on this host is %s (%s): give --murano-config %s", mc.Dir, mc.From, muranoConf)
}
