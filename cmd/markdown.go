package cmd

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/objgc/objgc/destroy"
)

// MermaidMaxObjects is the largest plan whose destruction order
// `objgc plan --format markdown` draws as a Mermaid flowchart
// (docs/plan-format.md, "Markdown"): beyond it a diagram is too dense to
// read in a merge-request comment, and GitLab and GitHub stop rendering
// large diagrams anyway (Mermaid's default maxEdges is 500).
const MermaidMaxObjects = 50

// writePlanMarkdown prints the plan as GitHub/GitLab-flavoured Markdown
// for a merge-request comment or a CI job summary: the counts, the groups
// in destruction order as a table, the notifications, the warnings, and a
// Mermaid flowchart of the destruction order when the plan has at most
// MermaidMaxObjects objects. Every string from the model goes through
// mdText or mermaidText: no id can break a table, open a code span or
// inject HTML.
func writePlanMarkdown(w io.Writer, doc *destroy.PlanFile, names []string) error {
	bw := bufio.NewWriter(w)
	s := doc.Summary
	fmt.Fprintf(bw, "## objgc plan\n\n")
	for i, n := range names {
		names[i] = mdCode(n)
	}
	fmt.Fprintf(bw, "Plan for %s.\n\n", strings.Join(names, " → "))
	fmt.Fprintln(bw, "| to destroy | groups | notifications | warnings | dropped | dangling references | without a destroy hook |")
	fmt.Fprintln(bw, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	fmt.Fprintf(bw, "| %d | %d | %d | %d | %d | %d | %d |\n\n", s.Destroy, s.Groups, s.Notifications, s.Warnings, s.Dropped, s.DanglingReferences, s.WithoutDestroyHook)
	dangling := doc.OnDangling == "error" && s.DanglingReferences > 0
	if s.ApplyRefuses && !dangling {
		fmt.Fprintf(bw, "**Apply would refuse:** a hook cannot run (see the `hook_cannot_run` warnings).\n\n")
	}
	if dangling {
		fmt.Fprintf(bw, "**Apply would refuse:** %d dangling %s to doomed objects (use `--on-dangling=keep` to destroy them and keep them flagged destroyed).\n\n",
			s.DanglingReferences, plural(s.DanglingReferences, "reference", "references"))
	}
	if s.Destroy == 0 {
		fmt.Fprintln(bw, "Nothing to destroy.")
	} else {
		fmt.Fprintf(bw, "### Destruction order (deepest group first)\n\n")
		fmt.Fprintln(bw, "| group | type | id | why | destroy hooks |")
		fmt.Fprintln(bw, "| ---: | --- | --- | --- | --- |")
		for _, g := range doc.Groups {
			for _, o := range g.Objects {
				reasons := make([]string, len(o.Reasons))
				for k, r := range o.Reasons {
					reasons[k] = mdReason(r)
				}
				hooks := "none"
				if len(o.Hooks) > 0 {
					hs := make([]string, len(o.Hooks))
					for k, h := range o.Hooks {
						hs[k] = mdCode(h.Path)
						if h.Error != "" {
							hs[k] += " (" + mdText(h.Error) + ")"
						}
					}
					hooks = strings.Join(hs, "<br>")
				}
				fmt.Fprintf(bw, "| %d | %s | %s | %s | %s |\n", g.Index, mdCode(orDash(o.Type)), mdCode(o.ID), strings.Join(reasons, "; "), hooks)
			}
		}
	}
	if len(doc.Notifications) > 0 {
		fmt.Fprintf(bw, "\n### Notifications, before any destroy\n\n")
		fmt.Fprintln(bw, "| # | subscriber | handler | publisher | group | hook |")
		fmt.Fprintln(bw, "| ---: | --- | --- | --- | ---: | --- |")
		for i, n := range doc.Notifications {
			hook := "none"
			if n.Hook != nil {
				hook = mdCode(n.Hook.Path)
			}
			fmt.Fprintf(bw, "| %d | %s | %s | %s | %d | %s |\n", i+1, mdCode(n.Subscriber), mdCode(n.Handler), mdCode(n.Publisher), n.Group, hook)
		}
	}
	if len(doc.Warnings) > 0 {
		fmt.Fprintf(bw, "\n### Warnings\n\n")
		fmt.Fprintln(bw, "| code | message |")
		fmt.Fprintln(bw, "| --- | --- |")
		for _, wn := range doc.Warnings {
			fmt.Fprintf(bw, "| %s | %s |\n", mdCode(string(wn.Code)), mdText(wn.Message))
		}
	}
	switch {
	case s.Destroy == 0:
	case s.Destroy > MermaidMaxObjects:
		fmt.Fprintf(bw, "\nNo diagram: %d objects are more than %d.\n", s.Destroy, MermaidMaxObjects)
	default:
		fmt.Fprintf(bw, "\n### Diagram\n\nAn arrow goes from an object to one destroyed after it: solid to its owner, dotted to a subscriber.\n\n")
		writeMermaid(bw, doc)
	}
	return bw.Flush()
}

// writeMermaid draws the groups as subgraphs, deepest first, and the
// destruction dependencies as edges. Node names are generated (n0, n1,
// ...); ids appear only in quoted labels, escaped by mermaidText.
func writeMermaid(w io.Writer, doc *destroy.PlanFile) {
	fmt.Fprintln(w, "```mermaid")
	fmt.Fprintln(w, "flowchart LR")
	node := map[string]string{}
	n := 0
	for _, g := range doc.Groups {
		fmt.Fprintf(w, "  subgraph g%d[\"group %d\"]\n", g.Index, g.Index)
		for _, o := range g.Objects {
			name := fmt.Sprintf("n%d", n)
			n++
			if _, dup := node[o.ID]; !dup {
				node[o.ID] = name
			}
			class := o.Type
			if len(o.Classes) > 0 {
				class = o.Classes[0]
			}
			fmt.Fprintf(w, "    %s[\"%s<br>%s\"]\n", name, mermaidText(orDash(class)), mermaidText(o.ID))
		}
		fmt.Fprintln(w, "  end")
	}
	for _, g := range doc.Groups {
		for _, o := range g.Objects {
			from := node[o.ID]
			for _, r := range o.Reasons {
				to, ok := node[r.ID]
				if !ok {
					continue
				}
				switch r.Code {
				case destroy.ReasonOwnedBy:
					fmt.Fprintf(w, "  %s --> %s\n", from, to)
				case destroy.ReasonSubscriber:
					fmt.Fprintf(w, "  %s -.-> %s\n", from, to)
				}
			}
		}
	}
	fmt.Fprintln(w, "```")
}

// mdReason is r.Text() with the id as a code span.
func mdReason(r destroy.Reason) string {
	if r.ID == "" {
		return mdText(r.Text())
	}
	const mark = "\x00"
	t := destroy.Reason{Code: r.Code, ID: mark, Handler: r.Handler}.Text()
	before, after, _ := strings.Cut(t, mark)
	return mdText(before) + mdCode(r.ID) + mdText(after)
}

// mdCode shows s (as term shows it) as a code span, where nothing is
// markup and no HTML is read, and in which GitLab and GitHub make no
// @mention or #reference: the span is delimited by one backtick more than
// the longest run of backticks in s (CommonMark 6.1) and padded with a
// space each side. A '|' would end a table cell even there, and a code
// span cannot show a backslash before an escaped '|', so a string with a
// '|' is given as mdText instead.
func mdCode(s string) string {
	s = term(s)
	if s == "" || strings.Contains(s, "|") || strings.Trim(s, " ") == "" {
		return mdText(s)
	}
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	return fence + " " + s + " " + fence
}

// mdText makes s inline Markdown text that shows s (as term shows it) and
// nothing else: term quotes control characters, then '&', '<', '>', '"',
// a single quote and '|' become character references (no HTML, no table cell
// boundary; GFM splits cells before it reads references) and every other
// character of mdSpecial is backslash-escaped (CommonMark 2.4), so that
// no backtick, bracket, emphasis or autolink is read.
func mdText(s string) string {
	s = term(s)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&#39;")
		case r == '|':
			b.WriteString("&#124;")
		case r < utf8.RuneSelf && strings.ContainsRune(mdSpecial, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(" ")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mermaidText makes s the inside of a quoted Mermaid label: term quotes
// control characters, then every ASCII character other than a letter, a
// digit, a space, '.', '-', '_', '/' and ':' becomes a Mermaid entity code
// (#NN;, mermaid.js.org "Entity codes to escape characters"), so that no
// quote ends the label, no '<' starts HTML, no backtick closes the fence
// and no '#' starts another entity.
func mermaidText(s string) string {
	s = term(s)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			r == ' ', r == '.', r == '-', r == '_', r == '/', r == ':':
			b.WriteRune(r)
		case r < utf8.RuneSelf:
			fmt.Fprintf(&b, "#%d;", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdSpecial are the ASCII punctuation characters that start or end
// Markdown inline syntax on GitHub or GitLab (code, emphasis, links,
// images, strikethrough, math, headings and lists where a cell could
// begin, references and mentions); mdText backslash-escapes them.
const mdSpecial = "\\`*_[]()#+-.!~{}$@"
