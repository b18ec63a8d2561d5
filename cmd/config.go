package cmd

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// configKeys maps a flag name to its key in the configuration file and its
// environment variable, where they differ from the defaults (key = flag
// name, variable = OBJGC_ + upper-case name with '-' as '_'). The
// precedence is flag > OBJGC_* > config file > default (docs/config.md,
// "Precedence"); docs/config.md lists every key and variable.
var configKeys = map[string]struct{ key, env string }{
	"hooks-dir":     {"hooks.dirs", "OBJGC_HOOKS_DIR"},
	"cache-dir":     {"cache.dir", "OBJGC_CACHE_DIR"},
	"murano-config": {"cache.murano-config", "OBJGC_MURANO_CONFIG"},
}

// flagOnly are the flags that neither a configuration file nor an OBJGC_*
// variable sets: a setting found in either is an error. --force turns
// failed hooks into destroyed objects, which nobody should get without
// typing it; the others name the files of one run, which a file or a
// variable left behind would silently point elsewhere. The commands read
// them from their flags, not from viper.
var flagOnly = map[string]bool{
	"force":    true,
	"write":    true,
	"out":      true,
	"junit":    true,
	"snapshot": true,
	"graph":    true,
}

// notInFile are flags a configuration file cannot set: --config names the
// file itself (its variable may); --help and the root's --version are no
// settings (no variable either, see flagEnv).
var notInFile = map[string]bool{"config": true, "help": true, "version": true}

// sharedSettings are the settings that mean the same to every command
// that has them, and that commands must agree on: where hooks are, where
// the package cache is, whether hooks run at all or are required, how
// dangling references are handled (a saved plan and its apply must
// agree, and plan judges a plan with apply's settings: runSettings),
// whether to colour, the configuration file itself. They have one key and one variable (hooks.dirs,
// OBJGC_HOOKS_DIR). Every other setting belongs to the command it is a
// flag of, and its key and variable are named after that command
// (plan.format, OBJGC_PLAN_FORMAT; cache.prune.keep,
// OBJGC_CACHE_PRUNE_KEEP), so that a format set for plan cannot reach
// version or apply (docs/config.md).
var sharedSettings = map[string]bool{
	"hooks-dir":          true,
	"cache-dir":          true,
	"murano-config":      true,
	"no-color":           true,
	"on-dangling":        true,
	"no-hooks":           true,
	"require-hooks":      true,
	"markdown-max-chars": true,
	"config":             true,
	"help":               true,
}

// commandScope returns c's path below the root ("plan", "cache prune"),
// "" for the root.
func commandScope(c *cobra.Command) string {
	if c == nil || !c.HasParent() {
		return ""
	}
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

// settingOf returns the configuration file key and the environment
// variable that set flag name of command c: the shared ones (see
// sharedSettings and configKeys) whatever c is, the others under c's
// scope. With c nil, it returns the unscoped names.
func settingOf(c *cobra.Command, name string) (key, env string) {
	if k, ok := configKeys[name]; ok {
		return k.key, k.env
	}
	scope := commandScope(c)
	if sharedSettings[name] || scope == "" {
		return name, envName(name)
	}
	return strings.ReplaceAll(scope, " ", ".") + "." + name, envName(strings.ReplaceAll(scope, " ", "_") + "_" + name)
}

// scopedEnv is the variable flag name of command c would have if it
// were c's own setting: OBJGC_APPLY_NO_HOOKS for apply's --no-hooks.
func scopedEnv(c *cobra.Command, name string) string {
	return envName(strings.ReplaceAll(commandScope(c), " ", "_") + "_" + name)
}

func envName(s string) string {
	return "OBJGC_" + strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
}

// globalOptions are the settings of the root's persistent flags, which
// every command has.
type globalOptions struct {
	Config  string
	NoColor bool
}

func (o *globalOptions) addFlags(pf *pflag.FlagSet) {
	pf.StringVar(&o.Config, "config", "", "your configuration file (default ./objgc.yaml, else <user config dir>/objgc/config.yaml), read above the system's, /etc/objgc/config.yaml")
	pf.BoolVar(&o.NoColor, "no-color", false, "never colour the output (NO_COLOR in the environment does the same)")
}

// config is the configuration of one run: the settings of the command
// that runs, resolved flag > OBJGC_* variable > the user's configuration
// file > the system's > default (docs/config.md, "Precedence"). The root
// command builds it once, before the command runs (load, from its
// PersistentPreRunE); commands get the one *config the root made, and by
// the time their RunE runs every setting is in the option field bound to
// its flag. The environment is read through getenv only (IO.Getenv), so
// that a test gives a run its own.
type config struct {
	// getenv reads the environment: IO.Getenv.
	getenv func(string) string
	// cmd is the command the configuration was built for.
	cmd *cobra.Command
	// files holds the configuration files' settings under their keys:
	// the user's file as its configuration, the system's keys as its
	// defaults (readSettings). Flags and variables are not in it.
	files *viper.Viper
	// system is the system configuration file read, "" for none.
	system string
}

// load builds the configuration of command c into cfg. Each setting is
// held under its key in the file (settingOf), its variable named from
// the key by the prefix OBJGC_ and the replacer of '.' and '-' by '_'
// (cache.prune.keep: OBJGC_CACHE_PRUNE_KEEP), or as configKeys names it.
// The file is --config, OBJGC_CONFIG, else defaultConfigFile. Then each
// flag the command line left unchanged is set from its variable, else
// from the files (setFlags), so that the option fields bound to the
// flags hold every setting.
//
// Every value is checked once, by the setting's check (checkSetting: the
// flag's type, its choices, a size or a duration), where it is read, so
// that the error names where it came from: a variable by its name, the
// file by its name and the key; the command line's values are checked
// by the flags' own types as they are parsed. It refuses, with an error
// naming the file or the variable and the key: a flag-only setting in a
// variable or the file; a command's setting under its unscoped variable;
// a file that is not a regular one, that belongs to another user than
// the one running objgc and root, or that its group or others can write;
// a key in the file that no command has; a value of the wrong type, a
// duration without a unit (a bare 5 would be 5 ns).
func (cfg *config) load(c *cobra.Command) error {
	if cfg.getenv == nil {
		cfg.getenv = func(string) string { return "" }
	}
	cfg.cmd = c
	if err := cfg.checkVariables(); err != nil {
		return err
	}
	cfg.files = viper.New()
	if err := cfg.readSettings(); err != nil {
		return err
	}
	return cfg.setFlags()
}

// loadConfig builds the configuration of command c, reading the
// environment through getenv: config.load.
func loadConfig(c *cobra.Command, getenv func(string) string) (*config, error) {
	cfg := &config{getenv: getenv}
	if err := cfg.load(c); err != nil {
		return nil, err
	}
	return cfg, nil
}

// hasSettings reports whether command c is one whose configuration the
// root command builds: every command but cobra's help and its
// __complete, which must work whatever a configuration file holds (a
// completion builds the configuration of the command it completes).
func hasSettings(c *cobra.Command) bool {
	if c.HasParent() && !c.Parent().HasParent() {
		switch c.Name() {
		case "help", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return false
		}
	}
	return true
}

// checkVariables checks the OBJGC_* variables of cfg.cmd's settings (see
// load): none sets a flag-only one, none is the unscoped name of a
// setting of the command, and each value suits its setting
// (checkSetting).
func (cfg *config) checkVariables() error {
	c := cfg.cmd
	var errs []error
	check := func(f *pflag.Flag) {
		_, env := settingOf(c, f.Name)
		legacy := envName(f.Name)
		if flagOnly[f.Name] {
			for _, e := range []string{env, legacy} {
				if cfg.getenv(e) != "" {
					errs = append(errs, fmt.Errorf("%s: --%s is set only on the command line", e, f.Name))
				}
			}
			return
		}
		if _, ok := flagEnv(c, f.Name); !ok {
			return
		}
		if legacy != env && cfg.getenv(legacy) != "" {
			errs = append(errs, fmt.Errorf("%s: not a setting: a setting of one command is named after it; for %s use %s (docs/config.md)",
				legacy, c.CommandPath(), env))
		}
		if scoped := scopedEnv(c, f.Name); sharedSettings[f.Name] && scoped != env && cfg.getenv(scoped) != "" {
			errs = append(errs, fmt.Errorf("%s: not a setting: --%s is shared by every command that has it; its variable is %s (docs/config.md)",
				scoped, f.Name, env))
		}
		if s := cfg.getenv(env); s != "" {
			if err := checkSetting(env, c, f, s); err != nil {
				errs = append(errs, err)
			}
		}
	}
	c.Flags().VisitAll(check)
	c.InheritedFlags().VisitAll(check)
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// readSettings reads the configuration files into cfg.files: the user's
// (--config, OBJGC_CONFIG, else defaultConfigFile) as its configuration,
// and below it the system's (systemConfigFile) as its defaults, key by
// key, as git reads /etc/gitconfig below ~/.gitconfig. Each file is
// checked (readConfigFile) and so are its keys and values
// (checkConfigKeys). The system file's cache (cache.dir or
// cache.murano-config) is left out when the command line, a variable or
// the user's file names one: both name the one package cache, and the
// closer source says which; so is its cache.murano-config when no file
// is there (a host without murano-engine). Without a file, cfg.files
// holds none of its keys.
func (cfg *config) readSettings() error {
	c, v := cfg.cmd, cfg.files
	path := ""
	if f := c.Flag("config"); f != nil {
		path = f.Value.String()
	}
	path = cmp.Or(path, cfg.getenv("OBJGC_CONFIG"))
	if path == "" {
		path = cfg.defaultConfigFile() // looked for only when none is named
	}
	if path != "" {
		data, err := readConfigFile(path)
		if err != nil {
			return err
		}
		v.SetConfigType(configType(path))
		if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
			return fmt.Errorf("reading configuration %s: %w", path, err)
		}
		v.SetConfigFile(path) // for ConfigFileUsed: messages name the file
		if err := checkConfigKeys(path, v, c.Root()); err != nil {
			return err
		}
	}
	sys := cfg.systemConfigFile()
	if sys == "" || (path != "" && sameFile(sys, path)) {
		return nil
	}
	data, err := readConfigFile(sys)
	if err != nil {
		return err
	}
	sv := viper.New()
	sv.SetConfigType(configType(sys))
	if err := sv.ReadConfig(bytes.NewReader(data)); err != nil {
		return fmt.Errorf("reading configuration %s: %w", sys, err)
	}
	if err := checkConfigKeys(sys, sv, c.Root()); err != nil {
		return err
	}
	cfg.system = sys
	cacheNamed := false
	for _, flag := range []string{"cache-dir", "murano-config"} {
		key, env := settingOf(c, flag)
		if f := c.Flags().Lookup(flag); f != nil && f.Changed || cfg.getenv(env) != "" || v.InConfig(key) {
			cacheNamed = true
		}
	}
	mcKey := configKeys["murano-config"].key
	for _, key := range sv.AllKeys() {
		if cacheNamed && (key == configKeys["cache-dir"].key || key == mcKey) {
			continue
		}
		// The package installs a system file naming /etc/murano/murano.conf
		// on every host, also where no murano-engine runs: there the
		// user's own cache is the one meant.
		if _, err := os.Stat(fmt.Sprint(sv.Get(key))); key == mcKey && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		v.SetDefault(key, sv.Get(key))
	}
	return nil
}

// systemConfigFile returns the system's configuration file,
// OBJGC_SYSTEM_CONFIG or else systemConfigPath, if anything is there,
// else "". As for the user's file (defaultConfigFile), a file found is
// then checked, and one that cannot be used is an error.
func (cfg *config) systemConfigFile() string {
	p := cmp.Or(cfg.getenv(systemConfigEnv), systemConfigPath)
	if p == "" {
		return ""
	}
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return p
}

// systemConfigEnv names another system configuration file than
// systemConfigPath: for a system that keeps it elsewhere, and for tests,
// which must not read the machine's.
const systemConfigEnv = "OBJGC_SYSTEM_CONFIG"

// setFlags gives each flag of cfg.cmd that the command line left
// unchanged the value of its variable, else of its key in the
// configuration files, through the flag's own Value: the option field a
// command binds to the flag (its addFlags method) gets its value by that
// one path, whatever set it. A list from the file sets each element. The
// flag stays unchanged, so that from still tells the command line from
// the rest. The values were checked where they were read (checkSetting).
func (cfg *config) setFlags() error {
	c := cfg.cmd
	seen := map[string]bool{}
	var errs []error
	set := func(f *pflag.Flag) {
		if seen[f.Name] || f.Changed || flagOnly[f.Name] || notInFile[f.Name] {
			return
		}
		seen[f.Name] = true
		key, env := settingOf(c, f.Name)
		var vals []any
		where := env
		if s := cfg.getenv(env); s != "" {
			vals = []any{s}
		} else if cfg.files.IsSet(key) {
			where = fmt.Sprintf("configuration key %q", key)
			val := cfg.files.Get(key)
			vals = []any{val}
			if list, ok := val.([]any); ok {
				vals = list
			}
		}
		for _, x := range vals {
			if err := f.Value.Set(fmt.Sprint(x)); err != nil {
				errs = append(errs, fmt.Errorf("%s: --%s: %w", where, f.Name, err))
				return
			}
		}
	}
	c.Flags().VisitAll(set)
	c.InheritedFlags().VisitAll(set)
	return joinErrors(errs...)
}

// from names where the setting of flag came from, for messages: "--" +
// flag, its variable, "KEY in FILE" for the user's or the system's
// configuration file; "" for the default.
func (cfg *config) from(flag string) string {
	key, env := settingOf(cfg.cmd, flag)
	switch {
	case cfg.cmd.Flags().Changed(flag):
		return "--" + flag
	case cfg.getenv(env) != "":
		return env
	case cfg.files.InConfig(key):
		return key + " in " + cfg.files.ConfigFileUsed()
	case cfg.files.IsSet(key):
		// The only defaults files holds are the system file's keys
		// (readSettings).
		return key + " in " + cfg.system
	}
	return ""
}

// readConfigFile reads the configuration file at path after checking,
// on the open file, that it is a regular file that the user running objgc
// (or root) owns and that neither its group nor others can write: a file
// someone else can change would change what apply does (docs/config.md).
// The file is opened without blocking, so that a named pipe is refused
// rather than waited on.
func readConfigFile(path string) ([]byte, error) {
	f, err := openConfigFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading configuration %s: %w", path, err)
		}
		return nil, fmt.Errorf("reading configuration %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading configuration %s: %w", path, unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not used: not a regular file (%s)", path, fileKind(st.Mode()))
	}
	if err := checkConfigPerms(path, st); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("reading configuration %s: %w", path, unwrapPath(err))
	}
	return data, nil
}

// checkConfigKeys checks every key of the configuration file at path
// (read into v) and its value against the settings of every command
// under root: a file is shared by all commands, so a key of any of them
// is known, and a bad value is an error whichever command runs.
func checkConfigKeys(path string, v *viper.Viper, root *cobra.Command) error {
	known := knownKeys(root)
	// v's keys are those of the file and --config's.
	var keys []string
	for _, key := range v.AllKeys() {
		if v.InConfig(key) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		s, ok := known[key]
		name := key[strings.LastIndex(key, ".")+1:]
		switch {
		case ok && flagOnly[s.flag.Name]:
			return fmt.Errorf("%s: key %q: set only on the command line (--%s)", path, key, s.flag.Name)
		case !ok && flagOnly[name]:
			return fmt.Errorf("%s: key %q: set only on the command line (--%s)", path, key, name)
		case ok && s.flag.Name == "config":
			return fmt.Errorf("%s: key %q: a configuration file cannot name another; give --config or OBJGC_CONFIG", path, key)
		case !ok || notInFile[s.flag.Name]:
			if sug := suggestKey(key, known); len(sug) > 0 {
				return fmt.Errorf("%s: key %q: unknown key (did you mean %s?)", path, key, quoteOr(sug))
			}
			return fmt.Errorf("%s: key %q: unknown key", path, key)
		}
		if err := checkSetting(path+": "+key, s.cmd, s.flag, v.Get(key)); err != nil {
			return err
		}
	}
	return nil
}

// quoteOr writes `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
func quoteOr(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = strconv.Quote(x)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// setting is a configuration key's flag and the command it belongs to.
type setting struct {
	cmd  *cobra.Command
	flag *pflag.Flag
}

// knownKeys maps every configuration key of the commands under root to
// its setting.
func knownKeys(root *cobra.Command) map[string]setting {
	known := map[string]setting{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		add := func(f *pflag.Flag) {
			if key, _ := settingOf(c, f.Name); known[key].flag == nil {
				known[key] = setting{c, f}
			}
		}
		c.Flags().VisitAll(add)
		c.PersistentFlags().VisitAll(add)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return known
}

// suggestKey returns the known keys closest to an unknown one: the key of
// a flag spelled as the flag (hooks-dir: hooks.dirs), a key under it
// (cache: cache.dir), the keys of every command with a flag of that name
// (format: plan.format, apply.format, ...: the key of a setting of one
// command without the command), or one at most two edits away and at most
// one edit in three bytes of key (so that "help" does not suggest
// "keep"), compared as a whole and as the name after the command; none
// when nothing is close.
func suggestKey(key string, known map[string]setting) []string {
	if k, ok := configKeys[key]; ok && known[k.key].flag != nil {
		return []string{k.key}
	}
	// A shared setting under a command's key: apply.no-hooks is no-hooks.
	if name := key[strings.LastIndex(key, ".")+1:]; sharedSettings[name] {
		if k, _ := settingOf(nil, name); known[k].flag != nil && k != key {
			return []string{k}
		}
	}
	names := make([]string, 0, len(known))
	for k, s := range known {
		if !flagOnly[s.flag.Name] && !notInFile[s.flag.Name] {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	// A shared key first: "cache" means cache.dir, not cache.add.format.
	for _, shared := range []bool{true, false} {
		for _, k := range names {
			if strings.HasPrefix(k, key+".") && sharedSettings[known[k].flag.Name] == shared {
				return []string{k}
			}
		}
	}
	close := func(a, b string) int {
		if d := editDistance(a, b); 3*d <= len(a) {
			return d
		}
		return 3
	}
	best, bestDist := []string(nil), 3
	for _, k := range names {
		d := close(key, k)
		if s := known[k]; !sharedSettings[s.flag.Name] {
			d = min(d, close(key, s.flag.Name))
		}
		switch {
		case d < bestDist:
			best, bestDist = []string{k}, d
		case d == bestDist && d < 3:
			best = append(best, k)
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// checkSetting checks a value for flag f that came from where (an
// OBJGC_* variable: a string; a configuration file: what its parser
// made of it) against the flag's type, so that the error names where it
// came from. A duration needs a unit, except 0. A flag whose value has
// a check of its own (checkedValue: the cache commands' sizes and
// durations) is checked by it, the one check of that setting whatever
// gives the value.
func checkSetting(where string, c *cobra.Command, f *pflag.Flag, val any) error {
	s := fmt.Sprint(val)
	if ch := choices(c, f.Name); ch != nil && !slices.Contains(ch, s) {
		return fmt.Errorf("%s: --%s must be %s, not %q", where, f.Name, orList(ch), s)
	}
	switch f.Value.Type() {
	case "duration":
		if _, err := time.ParseDuration(s); err == nil {
			if v, ok := f.Value.(checkedValue); ok {
				if err := v.check(s); err != nil {
					return fmt.Errorf("%s: %w", where, err)
				}
			}
			return nil
		}
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return fmt.Errorf("%s: %s has no unit; write %ss, %sm or %sh", where, s, s, s, s)
		}
		return fmt.Errorf("%s: %q is not a duration such as 30s, 5m or 1h", where, s)
	case "int":
		switch val.(type) {
		case int, int64, int32, uint, uint64:
			return nil
		case string:
			if _, err := strconv.Atoi(s); err == nil {
				return nil
			}
		}
		return fmt.Errorf("%s: %q is not a whole number", where, s)
	case "bool":
		switch val.(type) {
		case bool:
			return nil
		case string:
			if _, err := strconv.ParseBool(s); err == nil {
				return nil
			}
		}
		return fmt.Errorf("%s: %q is not true or false", where, s)
	case "stringArray":
		switch x := val.(type) {
		case string:
			return nil
		case []any:
			for _, e := range x {
				if !isScalar(e) {
					return fmt.Errorf("%s: want a list of paths, not a list holding %v", where, e)
				}
			}
			return nil
		}
		return fmt.Errorf("%s: want a list of paths, not %v", where, val)
	}
	if !isScalar(val) {
		return fmt.Errorf("%s: want one value, not %v", where, val)
	}
	if v, ok := f.Value.(checkedValue); ok {
		if err := v.check(s); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	return nil
}

func isScalar(v any) bool {
	switch v.(type) {
	case []any, map[string]any, map[any]any:
		return false
	}
	return true
}

// configType returns the format of the configuration file at path: JSON
// or TOML when its name ends in .json or .toml (in any case), else YAML,
// whatever else the name ends in. Viper would choose by any extension it
// knows (.ini, .properties, .env) and refuse the rest (.conf, .cfg), so a
// YAML file under a name usual for configuration would be misread or
// refused.
func configType(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return "json"
	case ".toml":
		return "toml"
	}
	return "yaml"
}

// defaultConfigFile returns ./objgc.yaml if anything is there, else the
// user's <config dir>/objgc/config.yaml if anything is there, else "". A
// file found is then checked (readConfigFile): one that cannot be used is
// an error, not skipped, since its settings would otherwise be dropped
// without a word.
func (cfg *config) defaultConfigFile() string {
	candidates := []string{"objgc.yaml"}
	if dir, err := userConfigDir.find(cfg.getenv); err == nil {
		candidates = append(candidates, filepath.Join(dir, "objgc", "config.yaml"))
	}
	for _, p := range candidates {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return p
		}
	}
	return ""
}

// splitList splits list values given as one string (an environment
// variable such as OBJGC_HOOKS_DIR=a:b) on the OS path-list separator.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, p := range filepath.SplitList(v) {
			if p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// defaultCacheDir returns the package cache root when no setting names
// one: <user cache dir>/objgc (docs/design.md, "The package cache").
func (cfg *config) defaultCacheDir() (string, error) {
	base, err := userCacheDir.find(cfg.getenv)
	if err != nil {
		return "", fmt.Errorf("no package cache directory: %w (set --cache-dir or OBJGC_CACHE_DIR)", err)
	}
	return filepath.Join(base, "objgc"), nil
}

// flagEnv returns the OBJGC_* environment variable that sets flag name
// (docs/config.md), false for a flag with none: --help, --version and the
// flag-only ones (whose variable is an error, see flagOnly).
func flagEnv(c *cobra.Command, name string) (string, bool) {
	if name == "help" || name == "version" || flagOnly[name] {
		return "", false
	}
	_, env := settingOf(c, name)
	return env, true
}

// choices returns the values flag name of command c takes, nil when it
// is not one of a list: a value from a variable or the file is checked
// against them where it is read, so that the error names where it came
// from. The commands check a flag's value again (with the same words).
func choices(c *cobra.Command, name string) []string {
	switch name {
	case "format":
		if s := commandScope(c); s == "plan" || s == "show" {
			return planFormatNames()
		}
		return []string{"text", "json"}
	case "on-dangling":
		return []string{"error", "keep"}
	}
	return nil
}

// orList writes "a", "a or b", "a, b or c".
func orList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
