package jsonedit

import (
	"encoding/binary"
	"errors"

	"github.com/objgc/objgc/internal/swar"
)

// Validator checks, as they are written to it piece by piece, that bytes
// form one JSON value (RFC 8259) with optional white space around it, as
// encoding/json.Valid does for bytes held whole: the check of an output
// that is never held whole. The zero value expects a value.
type Validator struct {
	stack []byte // open containers: '{' or '['
	state vstate
	// lit is what is left to read of a literal (true, false, null).
	lit string
	err error
}

type vstate uint8

const (
	vValue      vstate = iota // a value (or, after '[', a value or ']')
	vFirstValue               // after '[': a value or ']'
	vFirstKey                 // after '{': a key or '}'
	vKey                      // after ',' in an object: a key
	vColon                    // after a key
	vAfter                    // after a value: ',' or a closing bracket, or the end
	vString                   // inside a string
	vKeyString                // inside a key
	vEscape                   // after a backslash
	vKeyEscape
	vHex // in \uXXXX; hex counts the digits left
	vKeyHex
	vNumSign  // after '-'
	vNumZero  // a leading 0
	vNumInt   // integer digits
	vNumDot   // after '.'
	vNumFrac  // fraction digits
	vNumE     // after 'e'
	vNumESign // after the exponent's sign
	vNumExp   // exponent digits
	vLiteral
	vDone // the value is complete: only white space may follow
)

// errInvalid is what Err returns for bytes that are not one JSON value.
var errInvalid = errors.New("not valid JSON")

// Write checks p; it never fails, the verdict is Err's. Most bytes are
// inside strings or white space, and most of the others are the quotes,
// colons and commas between them: those are read here without step,
// which reads the rest one byte at a time: byte by byte, the check of a
// large write-back would take longer than its writing.
func (v *Validator) Write(p []byte) (int, error) {
	i := 0
	for i < len(p) && v.err == nil {
		switch v.state {
		case vString, vKeyString:
			// Eight bytes at a time while none is a quote, a backslash
			// or a control character.
			for i+8 <= len(p) {
				x := binary.LittleEndian.Uint64(p[i:])
				if swar.HasByte(x, '"')|swar.HasByte(x, '\\')|swar.HasLess(x, 0x20) != 0 {
					break
				}
				i += 8
			}
			for i < len(p) && p[i] != '"' && p[i] != '\\' && p[i] >= 0x20 {
				i++
			}
			if i < len(p) && p[i] == '"' {
				if v.state == vKeyString {
					v.state = vColon
				} else {
					v.valueEnd()
				}
				i++
				continue
			}
		case vColon:
			if i = skipWS(p, i); i < len(p) && p[i] == ':' {
				v.state = vValue
				i++
				continue
			}
		case vValue, vFirstValue:
			if i = skipWS(p, i); i < len(p) && p[i] == '"' {
				v.state = vString
				i++
				continue
			}
		case vFirstKey, vKey:
			if i = skipWS(p, i); i < len(p) && p[i] == '"' {
				v.state = vKeyString
				i++
				continue
			}
		case vAfter:
			// Inside a container: the stack is not empty.
			if i = skipWS(p, i); i < len(p) && p[i] == ',' {
				if v.stack[len(v.stack)-1] == '{' {
					v.state = vKey
				} else {
					v.state = vValue
				}
				i++
				continue
			}
		case vNumInt, vNumFrac, vNumExp:
			for i < len(p) && p[i] >= '0' && p[i] <= '9' {
				i++
			}
		case vDone:
			i = skipWS(p, i)
		}
		if i < len(p) {
			v.step(p[i])
			i++
		}
	}
	return len(p), nil
}

// skipWS returns the index of the first byte of p from i that is not
// white space, or len(p).
func skipWS(p []byte, i int) int {
	for i < len(p) && isWS(p[i]) {
		i++
	}
	return i
}

// WriteString is Write of a string.
func (v *Validator) WriteString(s string) (int, error) {
	for i := 0; i < len(s) && v.err == nil; i++ {
		v.step(s[i])
	}
	return len(s), nil
}

// WriteByte is Write of one byte.
func (v *Validator) WriteByte(c byte) error {
	if v.err == nil {
		v.step(c)
	}
	return nil
}

// Err returns nil when what was written is one complete JSON value.
func (v *Validator) Err() error {
	if v.err == nil {
		// A number at the very end is complete when it could end there.
		switch v.state {
		case vNumZero, vNumInt, vNumFrac, vNumExp:
			if len(v.stack) == 0 {
				return nil
			}
		case vDone:
			return nil
		case vAfter:
			if len(v.stack) == 0 {
				return nil
			}
		}
		return errInvalid
	}
	return v.err
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// valueEnd moves on once a value is complete.
func (v *Validator) valueEnd() {
	if len(v.stack) == 0 {
		v.state = vDone
	} else {
		v.state = vAfter
	}
}

func (v *Validator) step(c byte) {
	switch v.state {
	case vValue, vFirstValue:
		switch {
		case isWS(c):
		case c == ']' && v.state == vFirstValue:
			v.close('[')
		default:
			v.startValue(c)
		}
	case vFirstKey, vKey:
		switch {
		case isWS(c):
		case c == '"':
			v.state = vKeyString
		case c == '}' && v.state == vFirstKey:
			v.close('{')
		default:
			v.err = errInvalid
		}
	case vColon:
		switch {
		case isWS(c):
		case c == ':':
			v.state = vValue
		default:
			v.err = errInvalid
		}
	case vAfter:
		v.after(c)
	case vString, vKeyString:
		switch {
		case c == '"':
			if v.state == vKeyString {
				v.state = vColon
			} else {
				v.valueEnd()
			}
		case c == '\\':
			v.state++ // vEscape or vKeyEscape
			v.state++
		case c < 0x20:
			v.err = errInvalid
		}
	case vEscape, vKeyEscape:
		back := vString
		if v.state == vKeyEscape {
			back = vKeyString
		}
		switch c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			v.state = back
		case 'u':
			v.state = back + (vHex - vString)
			v.lit = "xxxx"
		default:
			v.err = errInvalid
		}
	case vHex, vKeyHex:
		if !isHex(c) {
			v.err = errInvalid
			return
		}
		v.lit = v.lit[1:]
		if v.lit == "" {
			v.state -= vHex - vString
		}
	case vNumSign:
		switch {
		case c == '0':
			v.state = vNumZero
		case c >= '1' && c <= '9':
			v.state = vNumInt
		default:
			v.err = errInvalid
		}
	case vNumZero, vNumInt:
		switch {
		case c >= '0' && c <= '9' && v.state == vNumInt:
		case c == '.':
			v.state = vNumDot
		case c == 'e' || c == 'E':
			v.state = vNumE
		default:
			v.numberEnd(c)
		}
	case vNumDot:
		if c >= '0' && c <= '9' {
			v.state = vNumFrac
		} else {
			v.err = errInvalid
		}
	case vNumFrac:
		switch {
		case c >= '0' && c <= '9':
		case c == 'e' || c == 'E':
			v.state = vNumE
		default:
			v.numberEnd(c)
		}
	case vNumE:
		switch {
		case c == '+' || c == '-':
			v.state = vNumESign
		case c >= '0' && c <= '9':
			v.state = vNumExp
		default:
			v.err = errInvalid
		}
	case vNumESign:
		if c >= '0' && c <= '9' {
			v.state = vNumExp
		} else {
			v.err = errInvalid
		}
	case vNumExp:
		if c < '0' || c > '9' {
			v.numberEnd(c)
		}
	case vLiteral:
		if c != v.lit[0] {
			v.err = errInvalid
			return
		}
		v.lit = v.lit[1:]
		if v.lit == "" {
			v.valueEnd()
		}
	case vDone:
		if !isWS(c) {
			v.err = errInvalid
		}
	}
}

func (v *Validator) startValue(c byte) {
	switch {
	case c == '{':
		v.stack = append(v.stack, '{')
		v.state = vFirstKey
	case c == '[':
		v.stack = append(v.stack, '[')
		v.state = vFirstValue
	case c == '"':
		v.state = vString
	case c == '-':
		v.state = vNumSign
	case c == '0':
		v.state = vNumZero
	case c >= '1' && c <= '9':
		v.state = vNumInt
	case c == 't':
		v.state, v.lit = vLiteral, "rue"
	case c == 'f':
		v.state, v.lit = vLiteral, "alse"
	case c == 'n':
		v.state, v.lit = vLiteral, "ull"
	default:
		v.err = errInvalid
	}
}

// numberEnd handles the byte c that ends a number.
func (v *Validator) numberEnd(c byte) {
	v.valueEnd()
	v.step(c)
}

// after handles c after a complete value inside a container.
func (v *Validator) after(c byte) {
	top := v.stack[len(v.stack)-1]
	switch {
	case isWS(c):
	case c == ',' && top == '{':
		v.state = vKey
	case c == ',':
		v.state = vValue
	case c == '}' || c == ']':
		v.close(c)
	default:
		v.err = errInvalid
	}
}

// close closes the innermost container with c ('}' or ']'; or the
// opening bracket itself for an empty one).
func (v *Validator) close(c byte) {
	open := byte('{')
	if c == ']' || c == '[' {
		open = '['
	}
	if len(v.stack) == 0 || v.stack[len(v.stack)-1] != open {
		v.err = errInvalid
		return
	}
	v.stack = v.stack[:len(v.stack)-1]
	v.valueEnd()
}
