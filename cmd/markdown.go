package cmd

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/objgc/objgc/destroy/order"
	"github.com/objgc/objgc/destroy/planfile"
)

// MermaidMaxObjects is the largest plan whose destruction order
// `objgc plan --format markdown` draws as a Mermaid flowchart
// (docs/plan-format.md, "Markdown"): beyond it a diagram is too dense to
// read in a merge-request comment, and GitLab and GitHub stop rendering
// large diagrams anyway (Mermaid's default maxEdges is 500).
const MermaidMaxObjects = 50

// MarkdownMaxChars is the default bound, in characters (Unicode code
// points), of the Markdown summary (--markdown-max-chars): under a pull
// request comment's 65,536 and far under a GitHub job summary's 1 MiB,
// with room for what a pipeline adds around it.
const MarkdownMaxChars = 60000

// markdownMinChars is the smallest bound --markdown-max-chars takes
// (besides 0, no bound): below it the counts and the notes of what was
// cut would not fit.
const markdownMinChars = 1000

// MarkdownFoldRows is the longest table the Markdown summary shows open;
// a longer one is folded in a <details> element, so that the counts and
// the warnings stay in sight.
const MarkdownFoldRows = MermaidMaxObjects

// mdSection is one table of the Markdown summary: its heading, its head
// (the header row and the delimiter row), and n rows that row renders.
type mdSection struct {
	heading string // "### Warnings\n\n", with the blank line before it when one is due
	head    string
	n       int
	row     func(i int) string
	noun    string // what a row is, plural: "objects", "notifications", "warnings"
}

// writePlanMarkdown prints the plan as GitHub/GitLab-flavoured Markdown
// for a merge-request comment or a CI job summary: the counts, the groups
// in destruction order as a table, the notifications, the warnings, and a
// Mermaid flowchart of the destruction order when the plan has at most
// MermaidMaxObjects objects. Every string from the model goes through
// mdText or mermaidText: no id can break a table, open a code span or
// inject HTML.
//
// A table of more than MarkdownFoldRows rows is folded in <details>. The
// whole is at most maxChars characters (0: no bound): when it would be
// more, the tables keep the rows that fit (the space shared out so that a
// long table does not crowd out a short one), each cut table says how
// many rows it shows, and the diagram is left out if it does not fit. The
// heading, the counts and why apply would refuse are always there.
func writePlanMarkdown(w io.Writer, doc *planfile.File, names []string, maxChars int) error {
	bw := bufio.NewWriter(w)
	head := markdownHead(doc, names)
	sections := markdownSections(doc)
	tail := markdownTail(doc)
	out := []string{head}
	used := runes(head) + runes(tail)
	for _, sec := range sections {
		used += runes(sec.heading) + runes(sec.head) + runes(foldOpen(sec)) + runes(foldClose(sec))
	}
	// need[k] is how many characters the rows of sections[k] take, counted
	// only as far as they could be shown.
	budget := -1
	if maxChars > 0 {
		budget = maxChars - used
	}
	need := make([]int, len(sections))
	fits := true
	for k, sec := range sections {
		for i := 0; budget >= 0 && i < sec.n; i++ {
			need[k] += runes(sec.row(i))
			if budget >= 0 && need[k] > budget {
				fits = false
				break
			}
		}
	}
	total := 0
	for _, n := range need {
		total += n
	}
	if budget >= 0 && total > budget {
		fits = false
	}
	if fits {
		for _, sec := range sections {
			out = append(out, sec.heading, foldOpen(sec), sec.head)
			for i := 0; i < sec.n; i++ {
				out = append(out, sec.row(i))
			}
			out = append(out, foldClose(sec))
		}
		out = append(out, tail)
		for _, s := range out {
			bw.WriteString(s)
		}
		return bw.Flush()
	}
	// Over the bound: leave the diagram out if it is one, and reserve room
	// for a note under each table, then share what is left.
	if doc.Summary.Destroy > 0 && doc.Summary.Destroy <= MermaidMaxObjects {
		used -= runes(tail)
		tail = fmt.Sprintf("\nNo diagram: it does not fit in the summary's %d characters.\n", maxChars)
		used += runes(tail)
	}
	for _, sec := range sections {
		used += runes(cutNote(sec, sec.n, sec.n, maxChars))
	}
	budget = max(maxChars-used, 0)
	share := shareOut(need, budget)
	for k, sec := range sections {
		out = append(out, sec.heading, foldOpen(sec), sec.head)
		shown, size := 0, 0
		for ; shown < sec.n; shown++ {
			r := sec.row(shown)
			if size+runes(r) > share[k] {
				break
			}
			size += runes(r)
			out = append(out, r)
		}
		out = append(out, foldClose(sec))
		if shown < sec.n {
			out = append(out, cutNote(sec, shown, sec.n, maxChars))
		}
	}
	out = append(out, tail)
	for _, s := range out {
		bw.WriteString(s)
	}
	return bw.Flush()
}

// shareOut divides budget among needs: each gets what it needs when that
// is at most an equal share of what is left, the others split the rest.
func shareOut(need []int, budget int) []int {
	got := make([]int, len(need))
	pending := []int{}
	for k, n := range need {
		if n > 0 {
			pending = append(pending, k)
		}
	}
	for len(pending) > 0 {
		share := budget / len(pending)
		var next []int
		for _, k := range pending {
			if need[k] <= share {
				got[k] = need[k]
				budget -= need[k]
			} else {
				next = append(next, k)
			}
		}
		if len(next) == len(pending) {
			for _, k := range next {
				got[k] = share
			}
			break
		}
		pending = next
	}
	return got
}

// checkMarkdownMaxChars refuses a bound on the Markdown summary that
// is negative, or too small to hold its counts and notes.
func checkMarkdownMaxChars(n int) error {
	if n < 0 || n > 0 && n < markdownMinChars {
		return usageErrorf("--markdown-max-chars must be 0 (no limit) or at least %d, not %d", markdownMinChars, n)
	}
	return nil
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// foldOpen and foldClose wrap a table of more than MarkdownFoldRows rows
// in a <details> element (GitHub and GitLab read Markdown inside it after
// a blank line).
func foldOpen(sec mdSection) string {
	if sec.n <= MarkdownFoldRows {
		return ""
	}
	return fmt.Sprintf("<details><summary>%d %s</summary>\n\n", sec.n, sec.noun)
}

func foldClose(sec mdSection) string {
	if sec.n <= MarkdownFoldRows {
		return ""
	}
	return "\n</details>\n"
}

// cutNote says that a table shows shown of its n rows, and where to find
// them all.
func cutNote(sec mdSection, shown, n, maxChars int) string {
	return fmt.Sprintf("\n**Cut:** %d of %d %s shown: the summary is limited to %d characters (`--markdown-max-chars`). `objgc show PLANFILE` or `--format json` lists them all.\n",
		shown, n, sec.noun, maxChars)
}

// markdownHead is the summary's heading, the counts and why apply would
// refuse: always shown, whatever the bound.
func markdownHead(doc *planfile.File, names []string) string {
	var b strings.Builder
	s := doc.Summary
	fmt.Fprintf(&b, "## objgc plan\n\n")
	shown := make([]string, len(names))
	for i, n := range names {
		shown[i] = mdCode(n)
	}
	fmt.Fprintf(&b, "Plan for %s.\n\n", strings.Join(shown, " → "))
	fmt.Fprintln(&b, "| to destroy | groups | notifications | warnings | dropped | dangling references | without a destroy hook |")
	fmt.Fprintln(&b, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d | %d |\n\n", s.Destroy, s.Groups, s.Notifications, s.Warnings, s.Dropped, s.DanglingReferences, s.WithoutDestroyHook)
	for _, r := range s.Refusals {
		fmt.Fprintf(&b, "**Apply would refuse:** %s.\n\n", mdText(r.Message))
	}
	if s.Destroy == 0 {
		fmt.Fprintln(&b, "Nothing to destroy.")
	}
	return b.String()
}

// markdownSections are the summary's tables: the destruction order, the
// notifications, the warnings (those that are not empty).
func markdownSections(doc *planfile.File) []mdSection {
	var secs []mdSection
	if doc.Summary.Destroy > 0 {
		type at struct{ g, o int }
		var rows []at
		for g := range doc.Groups {
			for o := range doc.Groups[g].Objects {
				rows = append(rows, at{g, o})
			}
		}
		secs = append(secs, mdSection{
			heading: "### Destruction order (deepest group first)\n\n",
			head:    "| group | type | id | why | destroy hooks |\n| ---: | --- | --- | --- | --- |\n",
			n:       len(rows),
			noun:    "objects",
			row: func(i int) string {
				g := doc.Groups[rows[i].g]
				return mdObjectRow(g.Index, g.Objects[rows[i].o])
			},
		})
	}
	if len(doc.Notifications) > 0 {
		secs = append(secs, mdSection{
			heading: "\n### Notifications, before any destroy\n\n",
			head:    "| # | subscriber | handler | publisher | group | hook |\n| ---: | --- | --- | --- | ---: | --- |\n",
			n:       len(doc.Notifications),
			noun:    "notifications",
			row: func(i int) string {
				n := doc.Notifications[i]
				hook := "none"
				if n.Hook != nil {
					hook = mdCode(n.Hook.Path)
				}
				return fmt.Sprintf("| %d | %s | %s | %s | %d | %s |\n", i+1, mdCode(n.Subscriber), mdCode(n.Handler), mdCode(n.Publisher), n.Group, hook)
			},
		})
	}
	if len(doc.Warnings) > 0 {
		secs = append(secs, mdSection{
			heading: "\n### Warnings\n\n",
			head:    "| code | message |\n| --- | --- |\n",
			n:       len(doc.Warnings),
			noun:    "warnings",
			row: func(i int) string {
				wn := doc.Warnings[i]
				return fmt.Sprintf("| %s | %s |\n", mdCode(string(wn.Code)), mdText(wn.Message))
			},
		})
	}
	return secs
}

// mdObjectRow is a doomed object's row of the destruction order.
func mdObjectRow(group int, o planfile.Object) string {
	reasons := make([]string, len(o.Reasons))
	for k, r := range o.Reasons {
		reasons[k] = mdReason(r)
	}
	hooks := "none"
	if len(o.Hooks) > 0 {
		hs := make([]string, len(o.Hooks))
		for k, h := range o.Hooks {
			hs[k] = mdCode(h.Path)
			if h.RunAs != "" {
				hs[k] += " (runs as " + mdText(h.RunAs) + ")"
			}
			if h.Error != "" {
				hs[k] += " (" + mdText(h.Error) + ")"
			}
		}
		hooks = strings.Join(hs, "<br>")
	}
	return fmt.Sprintf("| %d | %s | %s | %s | %s |\n", group, mdCode(orDash(o.Type)), mdCode(o.ID), strings.Join(reasons, "; "), hooks)
}

// markdownTail is the diagram, or why there is none.
func markdownTail(doc *planfile.File) string {
	var b strings.Builder
	switch s := doc.Summary; {
	case s.Destroy == 0:
	case s.Destroy > MermaidMaxObjects:
		fmt.Fprintf(&b, "\nNo diagram: %d objects are more than %d.\n", s.Destroy, MermaidMaxObjects)
	default:
		fmt.Fprintf(&b, "\n### Diagram\n\nAn arrow goes from an object to one destroyed after it: solid to its owner, dotted to a subscriber.\n\n")
		writeMermaid(&b, doc)
	}
	return b.String()
}

// writeMermaid draws the groups as subgraphs, deepest first, and the
// destruction dependencies as edges. Node names are generated (n0, n1,
// ...); ids appear only in quoted labels, escaped by mermaidText.
func writeMermaid(w io.Writer, doc *planfile.File) {
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
				case order.ReasonOwnedBy:
					fmt.Fprintf(w, "  %s --> %s\n", from, to)
				case order.ReasonSubscriber:
					fmt.Fprintf(w, "  %s -.-> %s\n", from, to)
				}
			}
		}
	}
	fmt.Fprintln(w, "```")
}

// mdReason is r.Text() with the id as a code span.
func mdReason(r order.Reason) string {
	if r.ID == "" {
		return mdText(r.Text())
	}
	const mark = "\x00"
	t := order.Reason{Code: r.Code, ID: mark, Handler: r.Handler}.Text()
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
