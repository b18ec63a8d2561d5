package snapshot

// Type is a parsed Murano type string name[/version][@package], e.g.
// io.murano.resources.LinuxMuranoInstance/0.0.0@io.murano. Version and
// Package are empty when neither the string nor the header's legacy
// classVersion and package keys give them.
type Type struct {
	Name    string // the class's full name
	Version string
	Package string // the FullName of the package defining the class
}

// String returns the type in Murano's name/version@package form.
func (t Type) String() string {
	s := t.Name
	if t.Version != "" {
		s += "/" + t.Version
	}
	if t.Package != "" {
		s += "@" + t.Package
	}
	return s
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// ParseType parses a type string exactly as the regular expression
// ^([a-zA-Z0-9_.]+)(?:/([^@]+))?(?:@([a-zA-Z0-9_.]+))?$ of Murano's
// engine (murano/dsl/helpers.py) does, without its cost. The results share
// s's memory.
func ParseType(s string) (Type, bool) {
	i := 0
	for i < len(s) && isNameByte(s[i]) {
		i++
	}
	if i == 0 {
		return Type{}, false
	}
	t := Type{Name: s[:i]}
	if i < len(s) && s[i] == '/' {
		j := i + 1
		for j < len(s) && s[j] != '@' {
			j++
		}
		if j == i+1 {
			return Type{}, false
		}
		t.Version = s[i+1 : j]
		i = j
	}
	if i < len(s) && s[i] == '@' {
		j := i + 1
		for j < len(s) && isNameByte(s[j]) {
			j++
		}
		if j == i+1 || j != len(s) {
			return Type{}, false
		}
		t.Package = s[i+1:]
		i = j
	}
	if i != len(s) {
		return Type{}, false
	}
	return t, true
}
