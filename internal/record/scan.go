package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// scanner reads the few fields stats need from a record's JSON and skips
// the rest without decoding it: encoding/json's reflection and its copies
// of every string are most of the time gonogo stats takes over a large
// store. It reads what json.Unmarshal reads for the same fields: a string
// with escapes or invalid UTF-8, a time, a setup are handed to
// json.Unmarshal itself; a key matches its field's name exactly or, as
// encoding/json matches, without regard to case; null leaves a field as
// it was; anything that is not JSON is an error.
type scanner struct {
	b []byte
	i int
}

var errSyntax = errors.New("not a JSON record")

func (s *scanner) errAt(what string) error {
	return fmt.Errorf("%w: %s at byte %d", errSyntax, what, s.i)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// record reads the whole input as one object (or null), calling field
// with each key; field reads or skips its value.
func (s *scanner) record(field func(key []byte) error) error {
	if err := s.object(field); err != nil {
		return err
	}
	if s.peek() != 0 {
		return s.errAt("text after the record")
	}
	return nil
}

// object reads an object, or null, calling field with each key.
func (s *scanner) object(field func(key []byte) error) error {
	if s.null() {
		return nil
	}
	if s.peek() != '{' {
		return s.errAt("want an object")
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.errAt("want a key")
		}
		key, err := s.rawString()
		if err != nil {
			return err
		}
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			if err := json.Unmarshal(key, &k); err != nil {
				return err
			}
			key = []byte(k)
		} else {
			key = key[1 : len(key)-1]
		}
		if s.peek() != ':' {
			return s.errAt("want a colon")
		}
		s.i++
		if err := field(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.errAt("want a comma or a brace")
		}
	}
}

// array reads an array, or null, calling elem for each element.
func (s *scanner) array(elem func() error) error {
	if s.null() {
		return nil
	}
	if s.peek() != '[' {
		return s.errAt("want an array")
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.errAt("want a comma or a bracket")
		}
	}
}

// null reads null if it is next.
func (s *scanner) null() bool {
	if s.peek() == 'n' && bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return true
	}
	return false
}

// skip reads any value and returns its bytes.
func (s *scanner) skip() ([]byte, error) {
	start := s.peekAt()
	var err error
	switch c := s.peek(); {
	case c == '{':
		err = s.object(func([]byte) error { _, err := s.skip(); return err })
	case c == '[':
		err = s.array(func() error { _, err := s.skip(); return err })
	case c == '"':
		_, err = s.rawString()
	case c == 't' && bytes.HasPrefix(s.b[s.i:], []byte("true")):
		s.i += 4
	case c == 'f' && bytes.HasPrefix(s.b[s.i:], []byte("false")):
		s.i += 5
	case c == 'n' && s.null():
	default:
		_, err = s.number()
	}
	return s.b[start:s.i], err
}

func (s *scanner) peekAt() int {
	s.ws()
	return s.i
}

// rawString reads a string and returns it quoted, as it stands.
func (s *scanner) rawString() ([]byte, error) {
	start := s.i
	s.i++ // the opening quote
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start:s.i], nil
		case c == '\\':
			if err := s.escape(); err != nil {
				return nil, err
			}
		case c < 0x20:
			return nil, s.errAt("control character in a string")
		default:
			s.i++
		}
	}
	return nil, s.errAt("unterminated string")
}

// escape steps over an escape in a string, at its backslash.
func (s *scanner) escape() error {
	if s.i+1 >= len(s.b) {
		return s.errAt("unterminated string")
	}
	switch s.b[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return nil
	case 'u':
		if s.i+6 > len(s.b) {
			return s.errAt("unterminated string")
		}
		for _, c := range s.b[s.i+2 : s.i+6] {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return s.errAt("bad escape")
			}
		}
		s.i += 6
		return nil
	}
	return s.errAt("bad escape")
}

// number reads a number as JSON writes it and returns its text.
func (s *scanner) number() ([]byte, error) {
	start := s.i
	if s.at('-') {
		s.i++
	}
	whole := s.i
	switch n := s.digits(); {
	case n == 0:
		return nil, s.errAt("want a value")
	case n > 1 && s.b[whole] == '0':
		return nil, s.errAt("leading zero")
	}
	if s.at('.') {
		s.i++
		if s.digits() == 0 {
			return nil, s.errAt("want a digit")
		}
	}
	if s.at('e') || s.at('E') {
		s.i++
		if s.at('+') || s.at('-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil, s.errAt("want a digit")
		}
	}
	return s.b[start:s.i], nil
}

// at reports whether c is the next byte.
func (s *scanner) at(c byte) bool { return s.i < len(s.b) && s.b[s.i] == c }

// digits steps over digits and says how many.
func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// str reads a string (or null, leaving *v) into *v.
func (s *scanner) str(v *string) error {
	if s.null() {
		return nil
	}
	if s.peek() != '"' {
		return s.errAt("want a string")
	}
	raw, err := s.rawString()
	if err != nil {
		return err
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		return json.Unmarshal(raw, v)
	}
	*v = string(body)
	return nil
}

// integer reads a whole number (or null, leaving *v) into *v.
func integer[T int | int64 | uint64](s *scanner, v *T) error {
	if s.null() {
		return nil
	}
	lit, err := s.number()
	if err != nil {
		return err
	}
	var x T
	switch p := any(&x).(type) {
	case *uint64:
		*p, err = strconv.ParseUint(string(lit), 10, 64)
	case *int64:
		*p, err = strconv.ParseInt(string(lit), 10, 64)
	case *int:
		var n int64
		n, err = strconv.ParseInt(string(lit), 10, strconv.IntSize)
		*p = int(n)
	}
	if err != nil {
		return fmt.Errorf("%w: number %s", errSyntax, lit)
	}
	*v = x
	return nil
}

// float reads a number (or null, leaving *v) into *v.
func (s *scanner) float(v *float64) error {
	if s.null() {
		return nil
	}
	lit, err := s.number()
	if err != nil {
		return err
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return fmt.Errorf("%w: number %s", errSyntax, lit)
	}
	*v = f
	return nil
}

// boolean reads true, false (or null, leaving *v) into *v.
func (s *scanner) boolean(v *bool) error {
	switch {
	case s.null():
	case s.peek() == 't' && bytes.HasPrefix(s.b[s.i:], []byte("true")):
		s.i += 4
		*v = true
	case s.peek() == 'f' && bytes.HasPrefix(s.b[s.i:], []byte("false")):
		s.i += 5
		*v = false
	default:
		return s.errAt("want true or false")
	}
	return nil
}

// time reads a time as time.Time's UnmarshalJSON reads it.
func (s *scanner) time(v *time.Time) error {
	raw, err := s.skip()
	if err != nil {
		return err
	}
	return v.UnmarshalJSON(raw)
}

// setup reads a setup record, or null, as json.Unmarshal reads it: into
// the record *v points to, if any.
func (s *scanner) setup(v **setupRecord) error {
	if s.null() {
		*v = nil
		return nil
	}
	if s.peek() != '{' {
		return s.errAt("want an object")
	}
	if *v == nil {
		*v = &setupRecord{}
	}
	r := *v
	return s.object(func(key []byte) error {
		switch fieldName(key, setupFields) {
		case "runner":
			return s.str(&r.Runner)
		case "runner_cmd":
			return s.str(&r.RunnerCmd)
		case "runner_args":
			return s.strs(&r.RunnerArgs)
		case "skills":
			return s.strs(&r.Skills)
		case "workflows":
			return s.str(&r.Workflows)
		case "policy":
			return s.str(&r.Policy)
		}
		_, err := s.skip()
		return err
	})
}

var setupFields = []string{"runner", "runner_cmd", "runner_args", "skills", "workflows", "policy"}

// strs reads an array of strings, or null, into *v.
func (s *scanner) strs(v *[]string) error {
	if s.null() {
		*v = nil
		return nil
	}
	out := (*v)[:0]
	if out == nil {
		out = []string{}
	}
	err := s.array(func() error {
		var x string
		err := s.str(&x)
		out = append(out, x)
		return err
	})
	*v = out
	return err
}

// fieldName is the name of names that key names: the same, or, as
// encoding/json matches a key to a field, the same regardless of case;
// "" for none.
func fieldName(key []byte, names []string) string {
	for _, n := range names {
		if string(key) == n {
			return n
		}
	}
	if !foldable(key) {
		return ""
	}
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return n
		}
	}
	return ""
}

// foldable reports whether key may match a lower-case field name other
// than exactly: it has an upper-case letter, or a character outside ASCII
// (the Kelvin sign folds to k).
func foldable(key []byte) bool {
	for _, c := range key {
		if 'A' <= c && c <= 'Z' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}
