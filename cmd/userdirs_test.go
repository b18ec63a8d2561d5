package cmd

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUserDirsMatchOS checks that userConfigDir and userCacheDir, which
// read the environment through IO.Getenv, give what os.UserConfigDir and
// os.UserCacheDir give for the same environment, error or not. The
// directories named need not exist: neither reads them.
func TestUserDirsMatchOS(t *testing.T) {
	base := t.TempDir()
	home, cfg, cache := filepath.Join(base, "home"), filepath.Join(base, "cfg"), filepath.Join(base, "cache")
	cases := []map[string]string{
		{"HOME": home},
		{"HOME": home, "XDG_CONFIG_HOME": cfg, "XDG_CACHE_HOME": cache},
		{"HOME": home, "XDG_CONFIG_HOME": "rel/cfg", "XDG_CACHE_HOME": "rel/cache"},
		{"XDG_CONFIG_HOME": cfg, "XDG_CACHE_HOME": cache},
		{},
	}
	for _, env := range cases {
		for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "AppData", "LocalAppData", "home"} {
			t.Setenv(k, env[k])
		}
		getenv := func(k string) string { return env[k] }
		for _, d := range []struct {
			name string
			ours userDir
			os   func() (string, error)
		}{
			{"config", userConfigDir, os.UserConfigDir},
			{"cache", userCacheDir, os.UserCacheDir},
		} {
			got, gotErr := d.ours.find(getenv)
			want, wantErr := d.os()
			if got != want || (gotErr == nil) != (wantErr == nil) {
				t.Errorf("%v: user %s dir %q, %v; os gives %q, %v", env, d.name, got, gotErr, want, wantErr)
			}
		}
	}
}
