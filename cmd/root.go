// Package cmd is objgc's command line: the cobra command tree, flag and
// configuration handling (viper), output formatting, and the mapping of
// errors to exit codes. The domain packages (snapshot, diff, destroy,
// pkgcache) know nothing of it.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// BuildInfo describes the binary; main sets it from goreleaser's ldflags.
type BuildInfo struct {
	Version, Commit, Date string
}

// Main runs objgc with the process's arguments and standard streams and
// returns the exit status. It is the only function that touches
// os.Stdin, os.Stdout and os.Stderr; everything below it gets them as IO.
// It reads os.Args for the arguments, and destroy's target lock also
// records os.Args as the holder's command line.
//
// sigs delivers SIGINT and SIGTERM; main passes the channel that
// internal/earlysignal registered while the program was still
// initializing, so that a signal at any instant after the runtime's start
// means 130, never death by the signal. Nil: Main registers one itself.
// The registration is never undone: a signal between the end of the run
// and the process's exit must not kill it with another status.
func Main(build BuildInfo, sigs <-chan os.Signal) int {
	// The first SIGINT or SIGTERM asks for a drain (apply starts no new
	// hook, lets running ones finish and writes back); the second cancels
	// the context, which kills running hooks (docs/apply.md).
	if sigs == nil {
		c := make(chan os.Signal, 2)
		signal.Notify(c, os.Interrupt, syscall.SIGTERM)
		sigs = c
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupt := make(chan struct{})
	go func() {
		<-sigs
		close(interrupt)
		<-sigs
		cancel()
	}()
	// Under systemd, errors and warnings carry their priority.
	stderr, flush := journalStderr(os.Stderr, os.Getenv)
	defer flush()
	streams := &IO{In: os.Stdin, Out: os.Stdout, Err: stderr, Getenv: os.Getenv, Environ: os.Environ,
		IsTTYOut: isTerminal(os.Stdout), IsTTYErr: isTerminal(os.Stderr), IsTTYIn: isTerminal(os.Stdin), Interrupt: interrupt}
	return run(ctx, build, os.Args[1:], streams)
}

// IO is the set of streams a command reads and writes. Nothing below Run
// uses the os package's streams directly.
type IO struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	Getenv func(string) string
	// Getenv and Environ are the environment: every setting, the
	// configuration files' places and the hooks' environment are read
	// through them, never through the os package. Environ lists it, for
	// the hooks' environment and the warning about OBJGC_* variables
	// that set nothing; nil: none.
	Environ  func() []string
	IsTTYOut bool // stdout is a terminal: colour may be used
	IsTTYErr bool // stderr is a terminal: progress lines may be shown
	IsTTYIn  bool // stdin is a terminal: apply may ask before it destroys
	// Interrupt is closed on the first SIGINT or SIGTERM; the context
	// of the run is cancelled on the second. Nil: never.
	Interrupt <-chan struct{}
	// progress is when progress lines are drawn; nil: after 500 ms, at
	// most every 100 ms. Tests set it to draw at once.
	progress *progressTiming
}

// environ is the environment, Environ's, for the hooks objgc runs; nil
// when Environ is.
func (s *IO) environ() []string {
	if s.Environ == nil {
		return nil
	}
	return s.Environ()
}

// interrupted returns a context cancelled on the first interrupt, for
// commands that have nothing to drain.
func (s *IO) interrupted(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if s.Interrupt != nil {
		go func() {
			select {
			case <-s.Interrupt:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// Run executes objgc with args (without the program name) and returns the
// exit status (see the Exit* constants). It prints errors to stderr.
func Run(ctx context.Context, build BuildInfo, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, build, args, &IO{In: stdin, Out: stdout, Err: stderr, Getenv: os.Getenv, Environ: os.Environ, IsTTYOut: isTerminal(stdout)})
}

// run is Run with the streams given: tests set IsTTYOut.
func run(ctx context.Context, build BuildInfo, args []string, streams *IO) int {
	root := newRootCmd(build, streams)
	root.SetArgs(args)
	c, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) && ee.err == nil {
		return ee.code
	}
	fmt.Fprintf(streams.Err, "objgc: %s\n", errorText(err))
	var ue *usageError
	// cobra has no error type for an unknown subcommand, only its text.
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command ") {
		fmt.Fprintf(streams.Err, "Run '%s --help' for usage.\n", c.CommandPath())
	}
	return exitCode(err)
}

func newRootCmd(build BuildInfo, streams *IO) *cobra.Command {
	cfg := &config{getenv: streams.Getenv}
	root := &cobra.Command{
		Use:   "objgc",
		Short: "Garbage-collect OpenStack Murano object models",
		Long: `objgc compares the previous deployment's snapshot of a Murano object model
with the incoming model, finds the objects removed offline, orders their
destruction as Murano's engine does, runs hook scripts for each step and
writes the model back.

Each setting comes from the first of these that sets it: its flag; its
OBJGC_* variable; your configuration file (--config or OBJGC_CONFIG, else
./objgc.yaml, else $XDG_CONFIG_HOME/objgc/config.yaml); the system's,
/etc/objgc/config.yaml (OBJGC_SYSTEM_CONFIG names another); the default.
docs/config.md lists every setting.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       fillBuildInfo(build).Version,
		// A misspelled OBJGC_* variable is warned about before any
		// command runs; not while a shell asks for completions, whose
		// stderr would land on the user's command line.
		// Then the configuration of the command that runs is built, the
		// one time in a run (config.load); cobra's help and completion
		// commands have none.
		PersistentPreRunE: func(c *cobra.Command, args []string) error {
			if streams.Environ != nil && !strings.HasPrefix(c.Name(), cobra.ShellCompRequestCmd) {
				warnUnknownVariables(streams.Err, c, streams.Environ())
			}
			if !hasSettings(c) {
				return nil
			}
			return cfg.load(c)
		},
	}
	root.SetVersionTemplate(versionLine(fillBuildInfo(build)))
	// --version without cobra's -v: -v is --verbose on every command that
	// has one, and one letter should not mean two things (docs/decisions.md).
	root.Flags().Bool("version", false, "print objgc's version, as objgc version does")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if c == root && strings.HasPrefix(err.Error(), "unknown shorthand flag: 'v' ") {
			return usageErrorf("%v: -v is --verbose where a command has it; the version is objgc --version or objgc version", err)
		}
		// A value refused by a setting's type names the flag itself,
		// as the same value from a variable or the file does.
		if ve := (*valueError)(nil); errors.As(err, &ve) {
			return &usageError{ve}
		}
		return &usageError{err}
	})
	global := &globalOptions{}
	global.addFlags(root.PersistentFlags())
	root.AddCommand(
		newPlanCmd(streams, global, cfg),
		newApplyCmd(streams, global, cfg),
		newShowCmd(streams, global),
		newCacheCmd(streams, cfg),
		newVersionCmd(build, streams),
	)
	// The streams are set before cobra's completion command is made: it
	// keeps the output stream it finds then.
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	strictCompletion(root)
	addCompletions(root, streams.Getenv)
	addExitStatus(root)
	return root
}

// strictCompletion makes objgc completion with no shell, or one cobra
// cannot write completions for, a usage error: cobra's own command prints
// its help and exits 0, which a setup script would take for success.
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, sub := range c.Commands() {
			shells = append(shells, sub.Name())
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("objgc completion needs a shell: %s", strings.Join(shells, ", "))
			}
			return usageErrorf("unknown shell %q: objgc completion writes scripts for %s", args[0], strings.Join(shells, ", "))
		}
	}
}

// addExitStatus lists the exit codes in the long help (and so the man
// page) of every command.
func addExitStatus(c *cobra.Command) {
	long := c.Long
	if long == "" {
		long = c.Short + "."
	}
	c.Long = long + "\n\n" + exitStatusHelp
	for _, sub := range c.Commands() {
		addExitStatus(sub)
	}
}
