package cmd

import (
	"io"

	"github.com/objgc/objgc/destroy/planfile"
)

// planFormat is one output format of a plan: objgc plan writes it from
// the plan it made, objgc show from a saved one. A format is added here
// and nowhere else: the flags' help, their completion, the settings'
// check and both commands' output read this table.
type planFormat struct {
	name string
	// hashesInputs: the format names the inputs' sha256, so plan hashes
	// them (a pass over every byte of the inputs the others skip).
	hashesInputs bool
	plan         func(w io.Writer, r *planRender) error
	show         func(w io.Writer, sp *planfile.File, opts *showOptions, pal *palette) error
}

// planRender is what objgc plan's formats write from.
type planRender struct {
	in    *inputs
	doc   *planJSON
	opts  *planOptions
	pal   *palette
	hooks *planHooks
}

// planFormats are the formats of plan and show, the first the default.
var planFormats = []planFormat{
	{
		name: "text",
		plan: func(w io.Writer, r *planRender) error {
			return writePlanText(w, r.pal, inputNames(r.in), r.opts.OnDangling, r.doc.view())
		},
		show: func(w io.Writer, sp *planfile.File, _ *showOptions, pal *palette) error {
			return writePlanText(w, pal, savedPlanNames(sp), sp.OnDangling, sp.View())
		},
	},
	{
		name:         "json",
		hashesInputs: true,
		plan:         func(w io.Writer, r *planRender) error { return r.doc.write(w) },
		show: func(w io.Writer, sp *planfile.File, _ *showOptions, _ *palette) error {
			return sp.WriteJSON(w)
		},
	},
	{
		name: "dot",
		plan: func(w io.Writer, r *planRender) error { return writeDot(w, r.doc.view()) },
		show: func(w io.Writer, sp *planfile.File, _ *showOptions, _ *palette) error {
			return writeDot(w, sp.View())
		},
	},
	{
		name:         "markdown",
		hashesInputs: true,
		plan: func(w io.Writer, r *planRender) error {
			return writePlanMarkdown(w, r.doc.document(), inputNames(r.in), r.opts.MarkdownMaxChars)
		},
		show: func(w io.Writer, sp *planfile.File, opts *showOptions, _ *palette) error {
			return writePlanMarkdown(w, sp, savedPlanNames(sp), opts.MarkdownMaxChars)
		},
	},
}

// planFormatNames lists the names of planFormats.
func planFormatNames() []string {
	names := make([]string, len(planFormats))
	for i, f := range planFormats {
		names[i] = f.name
	}
	return names
}

// findPlanFormat returns the format called name, or a usage error.
func findPlanFormat(name string) (*planFormat, error) {
	for i := range planFormats {
		if planFormats[i].name == name {
			return &planFormats[i], nil
		}
	}
	return nil, usageErrorf("--format must be %s, not %q", orList(planFormatNames()), name)
}

// planFormatHelp is the --format flag's help for plan and show, what
// ending it.
func planFormatHelp(what string) string {
	return "output format: " + orList(planFormatNames()) + " (" + what + ")"
}

// inputNames are the names of a plan's inputs as given (a plan just
// made names them so; a saved plan by absolute path, savedPlanNames).
func inputNames(in *inputs) []string {
	var names []string
	for _, d := range in.Docs() {
		names = append(names, d.Name)
	}
	return names
}
