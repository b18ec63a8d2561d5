package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

type versionOptions struct {
	Format string
}

func newVersionCmd(build BuildInfo, streams *IO) *cobra.Command {
	opts := &versionOptions{}
	c := &cobra.Command{
		Use:   "version",
		Short: "Print objgc's version",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runVersion(streams, fillBuildInfo(build), *opts)
		},
	}
	c.Flags().StringVar(&opts.Format, "format", "text", "output format: text or json")
	return c
}

// fillBuildInfo completes build from the module's build information when
// the binary was built without goreleaser's ldflags (go install, go run).
func fillBuildInfo(build BuildInfo) BuildInfo {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return build
	}
	if build.Version == "" {
		build.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && build.Commit == "":
			build.Commit = s.Value
		case s.Key == "vcs.time" && build.Date == "":
			build.Date = s.Value
		}
	}
	if build.Version == "" {
		build.Version = "(devel)"
	}
	return build
}

func runVersion(streams *IO, build BuildInfo, opts versionOptions) error {
	switch opts.Format {
	case "json":
		enc := json.NewEncoder(streams.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]string{
			"version": build.Version, "commit": build.Commit, "date": build.Date, "go": runtime.Version(),
		})
	case "text":
		_, err := io.WriteString(streams.Out, versionLine(build))
		return err
	default:
		return usageErrorf("--format must be text or json, not %q", opts.Format)
	}
}

// versionLine is the text of objgc version and objgc --version: "objgc
// VERSION (commit C, built D) GOVERSION" and a newline.
func versionLine(build BuildInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "objgc %s", build.Version)
	if build.Commit != "" {
		fmt.Fprintf(&b, " (commit %s", build.Commit)
		if build.Date != "" {
			fmt.Fprintf(&b, ", built %s", build.Date)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " %s\n", runtime.Version())
	return b.String()
}
