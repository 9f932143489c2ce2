package engine

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Printable is text that came from an agent or a person (an artifact, a
// summary, a reason, feedback, a plan) made safe to show to a person: on
// a terminal, in a Markdown file that may be cat'ed to one, in Slack.
// Nothing in it is a control sequence, so an agent cannot clear a line
// (ESC[2K), hide text (ESC[8m), write the clipboard (OSC 52) or reorder
// what a line says; what was there is shown, not obeyed:
//
//   - newline and tab are kept, so multi-line text keeps its lines;
//   - a carriage return before a newline (CRLF) is dropped; any other is
//     shown as ␍, as it would overwrite the line it is on;
//   - the other C0 controls and DEL are shown as their Control Pictures
//     (ESC as ␛, BEL as ␇, NUL as ␀, DEL as ␡);
//   - the C1 controls (U+0080 to U+009F, which some terminals read as
//     ESC sequences: U+009B is CSI), the bidirectional embeddings,
//     overrides and isolates (U+202A to U+202E, U+2066 to U+2069) and the
//     line and paragraph separators (U+2028, U+2029) are shown as
//     <U+XXXX>;
//   - a byte that is not valid UTF-8 is shown as U+FFFD;
//   - a byte order mark (U+FEFF) is dropped: it shows nothing and does
//     nothing.
//
// Text with none of these is returned as it is, without a copy.
func Printable(s string) string {
	i := firstUnprintable(s)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		i += writePrintable(&b, s, i)
	}
	return b.String()
}

// writePrintable writes to b the rune of s at byte i as Printable shows
// it, and returns its size in s.
func writePrintable(b *strings.Builder, s string, i int) int {
	r, size := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == utf8.RuneError && size == 1:
		b.WriteRune(utf8.RuneError)
	case r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
	case r == '\n' || r == '\t':
		b.WriteByte(byte(r))
	case r < 0x20:
		b.WriteRune(0x2400 + r)
	case r == 0x7f:
		b.WriteRune(0x2421)
	case r == 0xfeff:
	case shownAsCode(r):
		writeCodePoint(b, r)
	default:
		b.WriteString(s[i : i+size])
	}
	return size
}

// writeCodePoint writes r as <U+XXXX>, in at least four hex digits.
func writeCodePoint(b *strings.Builder, r rune) {
	b.WriteString("<U+")
	hex := strings.ToUpper(strconv.FormatInt(int64(r), 16))
	b.WriteString(strings.Repeat("0", 4-len(hex)))
	b.WriteString(hex)
	b.WriteByte('>')
}

// firstUnprintable is the index of the first byte of s that Printable
// changes, or len(s). Plain ASCII is checked a byte at a time, without
// decoding.
func firstUnprintable(s string) int {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiControl(c) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == 0xfeff || shownAsCode(r) {
			return i
		}
		i += size
	}
	return len(s)
}

// asciiControl reports whether c is an ASCII control Printable changes:
// any but newline and tab.
func asciiControl(c byte) bool {
	return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f
}

// shownAsCode reports whether r is a control character with no Control
// Picture of its own, shown by Printable as <U+XXXX>.
func shownAsCode(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}
