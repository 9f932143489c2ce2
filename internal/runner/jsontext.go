package runner

import (
	"errors"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonText is a JSON string decoded straight into bytes: an agent's answer
// (the artifact) is decoded once, where a string field would cost a copy
// for the string and another for the []byte an Outcome carries.
type jsonText []byte

// UnmarshalJSON implements json.Unmarshaler, decoding as encoding/json
// decodes a string: invalid UTF-8 and lone surrogates become U+FFFD. A JSON
// null leaves the text as it was.
func (t *jsonText) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	out, ok := unquoteJSON(data)
	if !ok {
		return errors.New("not a JSON string")
	}
	*t = out
	return nil
}

// rawRef is a JSON value left undecoded, as a json.RawMessage but without
// its copy: it refers to the bytes given to json.Unmarshal, so it is valid
// only as long as they are (an event line, while it is folded).
type rawRef []byte

// UnmarshalJSON implements json.Unmarshaler.
func (r *rawRef) UnmarshalJSON(data []byte) error {
	*r = data
	return nil
}

// unquoteJSON decodes the JSON string literal s, quotes included, into a
// slice no longer than s.
func unquoteJSON(s []byte) ([]byte, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return nil, false
	}
	s = s[1 : len(s)-1]
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\\':
			var ok bool
			if out, i, ok = unescape(out, s, i); !ok {
				return nil, false
			}
		case c == '"' || c < ' ':
			return nil, false
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, unicode.ReplacementChar)
			} else {
				out = append(out, s[i:i+size]...)
			}
			i += size
		}
	}
	return out, true
}

// unescape appends the escape sequence at s[i] (a backslash) decoded, and
// returns where the next character starts.
func unescape(out, s []byte, i int) ([]byte, int, bool) {
	if i+1 >= len(s) {
		return nil, 0, false
	}
	switch c := s[i+1]; c {
	case '"', '\\', '/', '\'':
		return append(out, c), i + 2, true
	case 'b':
		return append(out, '\b'), i + 2, true
	case 'f':
		return append(out, '\f'), i + 2, true
	case 'n':
		return append(out, '\n'), i + 2, true
	case 'r':
		return append(out, '\r'), i + 2, true
	case 't':
		return append(out, '\t'), i + 2, true
	case 'u':
		r := hex4(s[i:])
		if r < 0 {
			return nil, 0, false
		}
		i += 6
		if utf16.IsSurrogate(r) {
			if r2 := hex4(s[i:]); r2 >= 0 {
				if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
					return utf8.AppendRune(out, dec), i + 6, true
				}
			}
			r = unicode.ReplacementChar
		}
		return utf8.AppendRune(out, r), i, true
	}
	return nil, 0, false
}

// hex4 reads the \uXXXX at the start of s, or returns -1.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
