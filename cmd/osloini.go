package cmd

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// osloFile is one configuration file as oslo.config reads it: for each
// section (its name lower-cased, except DEFAULT), for each key (case
// kept), every value given, in order. oslo.config uses the last.
type osloFile struct {
	path     string
	sections map[string]map[string][]string
}

// value returns the last value of key in section (a normalized name).
func (f *osloFile) value(section, key string) (string, bool) {
	vals := f.sections[section][key]
	if len(vals) == 0 {
		return "", false
	}
	return vals[len(vals)-1], true
}

// osloParseError is a file that oslo.config's parser refuses: the
// process reading it (murano-engine) stops before it starts.
type osloParseError struct {
	path string
	line int
	msg  string
	text string
}

func (e *osloParseError) Error() string {
	return fmt.Sprintf("murano config %s: line %d: %s: %q; oslo.config refuses the file, so murano-engine would not start with it",
		e.path, e.line, e.msg, e.text)
}

// parseOslo reads data, the file at path, in the dialect of oslo.config's
// own parser (oslo_config/iniparser.py BaseParser.parse and
// oslo_config/cfg.py ConfigParser), which murano-engine's options are
// read with:
//
//   - the text is UTF-8 (Python's open() on a UTF-8 locale, without
//     taking off a byte order mark), split into lines at "\n", "\r\n"
//     and "\r"; trailing white space (Python's: str.rstrip()) is dropped;
//   - a blank line ends a value; a line starting with a space or a tab
//     continues the value above, without its leading white space (after
//     a comment, a section or a blank line there is none: refused);
//   - "[NAME]" starts section NAME, taken as written (blanks kept), its
//     name compared lower-cased except DEFAULT; a section written twice
//     is one section;
//   - a line starting with "#" or ";" is a comment; elsewhere those
//     characters are part of the value;
//   - any other line is KEY=VALUE or KEY:VALUE, split at whichever of
//     "=" and ":" comes first; both sides are stripped of white space,
//     and one pair of quotes (" or ') around the value is taken off;
//   - refused as oslo.config refuses them: an assignment without "=" or
//     ":", an empty key, a continuation line with no value above, a
//     section line that does not end in "]", an empty section name,
//     an assignment before any section, text that is not UTF-8.
//
// The parser is objgc's own: no Go INI library reads this dialect, and
// the point is to read exactly what the engine reads. gopkg.in/ini.v1,
// the closest, takes off a byte order mark, accepts "[engine] # note"
// and an assignment before any section, and keeps the indentation of a
// continued value.
func parseOslo(path string, data []byte) (*osloFile, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("murano config %s: not UTF-8 text; oslo.config refuses the file, so murano-engine would not start with it", path)
	}
	f := &osloFile{path: path, sections: map[string]map[string][]string{}}
	var (
		section    string
		inSection  bool
		key        string
		value      []string
		haveKey    bool
		lineno     int
		parseError = func(msg, text string) error {
			return &osloParseError{path: path, line: lineno, msg: msg, text: text}
		}
	)
	flush := func() error {
		haveKey = false
		if !inSection {
			return parseError("an assignment before any section header", key)
		}
		name := osloSectionName(section)
		if f.sections[name] == nil {
			f.sections[name] = map[string][]string{}
		}
		f.sections[name][key] = append(f.sections[name][key], strings.Join(value, "\n"))
		return nil
	}
	for _, line := range splitPyLines(string(data)) {
		lineno++
		line = strings.TrimRightFunc(line, isPySpace)
		switch {
		case line == "":
			if haveKey {
				if err := flush(); err != nil {
					return nil, err
				}
			}
			continue
		case line[0] == ' ' || line[0] == '\t':
			if !haveKey {
				return nil, parseError("unexpected continuation line (an indented line with no value above)", line)
			}
			value = append(value, strings.TrimLeftFunc(line, isPySpace))
			continue
		}
		if haveKey {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		switch line[0] {
		case '[':
			if !strings.HasSuffix(line, "]") {
				return nil, parseError("invalid section: the line does not end with ]", line)
			}
			if len(line) <= 2 {
				return nil, parseError("empty section name", line)
			}
			section, inSection = line[1:len(line)-1], true
			name := osloSectionName(section)
			if f.sections[name] == nil {
				f.sections[name] = map[string][]string{}
			}
		case '#', ';':
		default:
			i := strings.IndexAny(line, "=:")
			if i < 0 {
				return nil, parseError("no ':' or '=' in an assignment", line)
			}
			key = strings.TrimFunc(line[:i], isPySpace)
			v := strings.TrimFunc(line[i+1:], isPySpace)
			if v != "" && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
				v = v[1:max(1, len(v)-1)] // Python's v[1:-1]: "" for a lone quote
			}
			if key == "" {
				return nil, parseError("empty key", line)
			}
			value, haveKey = []string{v}, true
		}
	}
	if haveKey {
		if err := flush(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// osloSectionName is oslo.config's _normalize_group_name.
func osloSectionName(s string) string {
	if s == "DEFAULT" {
		return s
	}
	return pyLower(s)
}

// pyLower is Python's str.lower(): Go's strings.ToLower but for the one
// unconditional special case (U+0130 lowers to "i" and a combining dot).
func pyLower(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "\u0130", "i\u0307"))
}

// isPySpace is Python's str.isspace() for one character, which
// str.strip() takes off: Unicode's white space and the separators
// U+001C to U+001F.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// splitPyLines splits s into lines as Python's text files do (universal
// newlines): at "\r\n", "\n" and "\r", without the line ends.
func splitPyLines(s string) []string {
	var lines []string
	for s != "" {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	return lines
}
