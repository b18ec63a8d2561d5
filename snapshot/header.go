package snapshot

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/objgc/objgc/internal/jsonedit"
)

// header holds what the reader takes from an object's "?" value.
type header struct {
	start        int
	id           string
	hasID        bool
	typeString   string
	typ          strRef // typeString as the index keeps it (scanner.typeRef)
	destroyed    bool
	depLo, depHi int32 // the header's records in the scanner's arena
	classVersion string
	pkg          string
}

// unescape decodes a JSON string literal (with its quotes). It is only used
// for the rare strings that hold escapes; the input has been validated.
func unescape(quoted []byte) string {
	var v string
	if err := json.Unmarshal(quoted, &v); err != nil {
		return string(quoted[1 : len(quoted)-1])
	}
	return v
}

// headerString reads a string or null at s.pos. ok is false for null.
func (s *scanner) headerString(what string) (v string, ok bool, err error) {
	if s.pos < len(s.data) && s.data[s.pos] == 'n' {
		return "", false, s.literal("null")
	}
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		if err := s.value(); err != nil {
			return "", false, err
		}
		return "", false, s.modelErr(what + " must be a string")
	}
	start := s.pos
	n, esc, err := s.string()
	if err != nil {
		return "", false, err
	}
	if esc {
		raw := s.data[start:s.pos]
		if e, ok := jsonedit.LoneSurrogate(raw); ok {
			return "", false, s.modelErr(fmt.Sprintf("%s holds %s, a lone UTF-16 surrogate: it has no UTF-8 form, so objgc could not compare it, write it back or hand it to a hook exactly; ids, types and handler names must be Unicode text", what, e))
		}
		v = unescape(raw)
	} else {
		v = s.str(start+1, start+1+int(n))
	}
	// Raw control characters were refused by the scanner: only an escape,
	// DEL or a C1 control (non-ASCII) can put one in v.
	if esc || s.high {
		if r, ok := controlChar(v); ok {
			return "", false, s.modelErr(fmt.Sprintf("%s %s holds the control character U+%04X; objgc refuses control characters (U+0000 to U+001F, U+007F to U+009F) in ids, types and handler names: they would split the list of doomed ids handed to hooks and forge lines on terminals and in logs", what, strconv.Quote(v), r))
		}
	}
	return v, true, nil
}

// controlChar returns the first control character (Unicode category Cc:
// U+0000-U+001F, U+007F-U+009F) in v, which is valid UTF-8.
func controlChar(v string) (rune, bool) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c < 0x20 || c == 0x7f:
			return rune(c), true
		case c == 0xc2 && i+1 < len(v) && v[i+1] >= 0x80 && v[i+1] <= 0x9f:
			// U+0080-U+009F, the C1 controls, are 0xc2 0x80-0x9f in UTF-8.
			return rune(v[i+1]), true
		}
	}
	return 0, false
}

// header reads the "?" value at s.pos into h. Values objgc does not read
// are validated and skipped; nothing inside a header is a reference.
func (s *scanner) header(h *header) error {
	// Not a defer: with as many returns as headerMembers has, Go cannot
	// open-code one, and a defer on the heap's path for every header
	// costs more than the rest of this function's bookkeeping. A panic
	// (a fault of a mapped model) abandons the scanner anyway.
	s.inHeader++
	err := s.headerMembers(h)
	s.inHeader--
	return err
}

// headerMembers is header's reading of the "?" object's members.
func (s *scanner) headerMembers(h *header) error {
	if err := s.enter(); err != nil {
		return err
	}
	h.start = s.pos
	h.depLo, h.depHi = int32(len(s.idx.deps)), int32(len(s.idx.deps))
	s.pos++
	kset := s.openKeys()
	seg := len(s.path)
	s.path = append(s.path, 0)
	typeSeg := int32(-1) // the "type" key, for an error's path
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
	} else {
		for {
			s.path[seg] = 0 // no key read yet
			key, err := s.key()
			if err != nil {
				return err
			}
			s.path[seg] = int32(key.start - 1)
			if !s.newKey(&kset, key.hash) {
				if err := s.addKey(&kset, h.start, seg, key); err != nil {
					return err
				}
			}
			k := s.str(key.start, key.end)
			if key.escaped {
				k = unescape(s.data[key.start-1 : key.end+1])
			}
			switch k {
			case "id":
				id, ok, err := s.headerString("the id")
				if err != nil {
					return err
				}
				if ok && id == "" {
					return s.modelErr("the id must be a non-empty string")
				}
				h.id, h.hasID = id, ok
			case "type":
				t, ok, err := s.headerString("the type")
				if err != nil {
					return err
				}
				if ok && t == "" {
					return s.modelErr(`type "" does not parse; expected name[/version][@package]`)
				}
				h.typeString = t
				typeSeg = s.path[seg]
			case "classVersion":
				if h.classVersion, _, err = s.headerString("classVersion"); err != nil {
					return err
				}
			case "package":
				if h.pkg, _, err = s.headerString("package"); err != nil {
					return err
				}
			case "destroyed":
				switch {
				case s.pos+4 <= len(s.data) && string(s.data[s.pos:s.pos+4]) == "true":
					h.destroyed = true
					s.pos += 4
				case s.pos+5 <= len(s.data) && string(s.data[s.pos:s.pos+5]) == "false":
					s.pos += 5
				case s.pos+4 <= len(s.data) && string(s.data[s.pos:s.pos+4]) == "null":
					s.pos += 4
				default:
					if err := s.value(); err != nil {
						return err
					}
					return s.modelErr("destroyed must be true or false")
				}
			case "dependencies":
				if err := s.dependencies(h); err != nil {
					return err
				}
			default:
				if err := s.value(); err != nil {
					return err
				}
			}
			more, err := s.more('}')
			if err != nil {
				return err
			}
			if !more {
				break
			}
		}
	}
	s.closeKeys(&kset)
	// A type the table knows parsed before: each is parsed once.
	var known bool
	if h.typ, known = s.typeRef(h.typeString); h.typeString != "" && !known {
		if _, ok := ParseType(h.typeString); !ok {
			s.path[seg] = typeSeg
			return s.modelErr(fmt.Sprintf("type %q does not parse; expected name[/version][@package]", h.typeString))
		}
	}
	s.path = s.path[:seg]
	s.depth--
	return nil
}

// dependencies reads "dependencies": {"onDestruction": [{"subscriber": ID,
// "handler": NAME|null}, ...]} (murano/dsl/murano_object.py).
func (s *scanner) dependencies(h *header) error {
	if s.pos < len(s.data) && s.data[s.pos] == 'n' {
		return s.literal("null")
	}
	if s.pos >= len(s.data) || s.data[s.pos] != '{' {
		if err := s.value(); err != nil {
			return err
		}
		return s.modelErr(`dependencies must be a JSON object like {"onDestruction": [...]}`)
	}
	return s.objectKeys(func(key string) error {
		if key != "onDestruction" {
			return s.value()
		}
		if s.pos < len(s.data) && s.data[s.pos] == 'n' {
			return s.literal("null")
		}
		if s.pos >= len(s.data) || s.data[s.pos] != '[' {
			if err := s.value(); err != nil {
				return err
			}
			return s.modelErr("onDestruction must be an array of {\"subscriber\": ID, \"handler\": NAME or null}")
		}
		return s.arrayItems(func() error {
			if s.pos >= len(s.data) || s.data[s.pos] != '{' {
				if err := s.value(); err != nil {
					return err
				}
				return s.modelErr("an onDestruction record must be a JSON object {\"subscriber\": ID, \"handler\": NAME or null}")
			}
			var d Dependency
			hasSubscriber := false
			recordDepth := len(s.path)
			err := s.objectKeys(func(key string) error {
				var err error
				switch key {
				case "subscriber":
					d.Subscriber, hasSubscriber, err = s.headerString("the subscriber")
					if err == nil && (!hasSubscriber || d.Subscriber == "") {
						err = s.modelErr("the subscriber must be an object id (a non-empty string)")
					}
					return err
				case "handler":
					d.Handler, d.HasHandler, err = s.headerString("the handler")
					return err
				}
				return s.value()
			})
			if err != nil {
				return err
			}
			if !hasSubscriber {
				s.path = s.path[:recordDepth]
				return s.modelErr("an onDestruction record needs a \"subscriber\" id")
			}
			if len(s.idx.deps) == cap(s.idx.deps) {
				s.idx.deps = grow(s.idx.deps, 1, s.pos, len(s.data))
			}
			s.idx.deps = append(s.idx.deps, d)
			h.depHi = int32(len(s.idx.deps))
			return nil
		})
	})
}

// objectKeys reads a JSON object at s.pos, calling fn with s.pos on each
// key's value; fn must consume the value.
func (s *scanner) objectKeys(fn func(key string) error) error {
	if err := s.enter(); err != nil {
		return err
	}
	open, kset := s.pos, s.openKeys()
	s.pos++
	seg := len(s.path)
	s.path = append(s.path, 0)
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
	} else {
		for {
			s.path[seg] = 0 // no key read yet
			key, err := s.key()
			if err != nil {
				return err
			}
			s.path[seg] = int32(key.start - 1)
			if !s.newKey(&kset, key.hash) {
				if err := s.addKey(&kset, open, seg, key); err != nil {
					return err
				}
			}
			k := s.str(key.start, key.end)
			if key.escaped {
				k = unescape(s.data[key.start-1 : key.end+1])
			}
			if err := fn(k); err != nil {
				return err
			}
			more, err := s.more('}')
			if err != nil {
				return err
			}
			if !more {
				break
			}
		}
	}
	s.closeKeys(&kset)
	s.path = s.path[:seg]
	s.depth--
	return nil
}

// arrayItems reads a JSON array at s.pos, calling fn with s.pos on each
// item; fn must consume the item.
func (s *scanner) arrayItems(fn func() error) error {
	if err := s.enter(); err != nil {
		return err
	}
	s.pos++
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		s.depth--
		return nil
	}
	seg := len(s.path)
	s.path = append(s.path, -1)
	for i := int32(0); ; i++ {
		s.path[seg] = -(i + 1)
		s.ws()
		if err := fn(); err != nil {
			return err
		}
		more, err := s.more(']')
		if err != nil {
			return err
		}
		if !more {
			s.path = s.path[:seg]
			s.depth--
			return nil
		}
	}
}
