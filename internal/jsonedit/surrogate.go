package jsonedit

// LoneSurrogate returns the first \u escape of a high surrogate not
// followed by a low one, or of a low surrogate not preceded by a high one,
// in the valid JSON string literal quoted (with its quotes). RFC 8259
// section 8.2 leaves such strings' meaning to the reader: encoding/json
// (and DecodeString) reads every one as U+FFFD, Python's json keeps each
// as itself, so two keys that differ only there decode equal here.
func LoneSurrogate(quoted []byte) (string, bool) {
	for i := 1; i < len(quoted)-1; i++ {
		if quoted[i] != '\\' {
			continue
		}
		i++
		if quoted[i] != 'u' {
			continue
		}
		u := hex4(quoted[i+1 : i+5])
		switch {
		case u >= 0xd800 && u <= 0xdbff:
			if i+10 < len(quoted) && quoted[i+5] == '\\' && quoted[i+6] == 'u' {
				if l := hex4(quoted[i+7 : i+11]); l >= 0xdc00 && l <= 0xdfff {
					i += 10
					continue
				}
			}
			return string(quoted[i-1 : i+5]), true
		case u >= 0xdc00 && u <= 0xdfff:
			return string(quoted[i-1 : i+5]), true
		}
		i += 4
	}
	return "", false
}

// hex4 decodes four hex digits (valid JSON has them after \u).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
