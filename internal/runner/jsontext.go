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
			out, i = appendRune(out, s, i)
		}
	}
	return out, true
}

// appendRune appends the character of more than one byte at s[i], or the
// replacement character for a byte that starts none, and returns where
// the next character starts.
func appendRune(out, s []byte, i int) ([]byte, int) {
	r, size := utf8.DecodeRune(s[i:])
	if r == utf8.RuneError && size == 1 {
		return utf8.AppendRune(out, unicode.ReplacementChar), i + size
	}
	return append(out, s[i:i+size]...), i + size
}

// unescape appends the escape sequence at s[i] (a backslash) decoded, and
// returns where the next character starts.
func unescape(out, s []byte, i int) ([]byte, int, bool) {
	if i+1 >= len(s) {
		return nil, 0, false
	}
	c := s[i+1]
	if c == 'u' {
		return unescapeU(out, s, i)
	}
	if e := escaped[c]; e != 0 {
		return append(out, e), i + 2, true
	}
	return nil, 0, false
}

// escaped is the character each one-letter escape stands for; 0 for none.
var escaped = [256]byte{
	'"': '"', '\\': '\\', '/': '/', '\'': '\'',
	'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t',
}

// unescapeU appends the \uXXXX escape at s[i] decoded, with the low half
// that follows a high surrogate; a lone surrogate is the replacement
// character.
func unescapeU(out, s []byte, i int) ([]byte, int, bool) {
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

// hex4 reads the \uXXXX at the start of s, or returns -1.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		d := hexDigit(c)
		if d < 0 {
			return -1
		}
		r = r*16 + d
	}
	return r
}

// hexDigit is the value of the hex digit c, or -1.
func hexDigit(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}
