package bot

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Slack rewrites what people type before gonogo sees it, and the rules
// below undo that the same way for commands and mentions:
//
//   - Markup first, entities second. Slack encodes a typed "<", ">" and "&"
//     as "&lt;", "&gt;" and "&amp;", so every real "<" in the text opens
//     Slack markup: "<https://x|label>" becomes the label (or "label (url)"
//     when the label is not the address itself), "<@U123|ana>" becomes
//     "@ana" ("@U123" without a label), "<#C123|general>" becomes
//     "#general", "<!here>" becomes "@here" and "<!subteam^S1|@team>"
//     "@team". Only then are the three entities decoded, in one pass, so a
//     typed "&lt;" stays text and never turns into markup.
//   - Any Unicode space (NBSP included) and the zero-width characters chat
//     clients leave in pasted text separate words; curly quotes work like
//     straight ones; "—" and "–" (a "--" that a keyboard turned into a dash)
//     are read as "--" in front of a flag name and, alone, as the "--" that
//     starts the context.
//   - Text that is not valid UTF-8, or that carries a control character
//     other than tab and line breaks, or an invisible text-direction
//     override, is refused with its position: what a person sees must be
//     what runs.
//   - Subcommands are matched ignoring letter case, because phones
//     capitalize the first word ("Chain a -> b").

// checkText refuses text that is not valid UTF-8, is longer than maxChars
// characters (no limit when maxChars < 0), or holds a control character
// other than tab and line breaks or a text-direction override.
func checkText(what, s string, maxChars int) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8 text", what)
	}
	if maxChars >= 0 {
		if n := utf8.RuneCountInString(s); n > maxChars {
			return fmt.Errorf("%s is %d characters long; the limit is %d", what, n, maxChars)
		}
	}
	return checkRunes(what, s)
}

// checkRunes refuses the first control character other than tab and line
// breaks, or text-direction override, in s, naming its line and column.
func checkRunes(what, s string) error {
	line, col := 1, 0
	for _, r := range s {
		col++
		switch {
		case r == '\n':
			line, col = line+1, 0
		case r == '\t' || r == '\r':
		case unicode.IsControl(r):
			return fmt.Errorf("%s has a control character (U+%04X) at line %d, column %d: remove it", what, r, line, col)
		case isDirectionOverride(r):
			return fmt.Errorf("%s has an invisible text-direction character (U+%04X) at line %d, column %d: remove it",
				what, r, line, col)
		}
	}
	return nil
}

// isDirectionOverride reports the invisible characters that make text
// read in another order than it runs (U+202A to U+202E, U+2066 to U+2069).
func isDirectionOverride(r rune) bool {
	return r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069'
}

var slackEntities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// slackText undoes Slack's formatting of typed text (see the top of this
// file). With dropMentions, user mentions are removed instead of written
// as "@name".
func slackText(s string, dropMentions bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		j := strings.IndexAny(s[i+1:], "<>")
		if j < 0 || s[i+1+j] == '<' {
			b.WriteByte('<') // not markup: Slack never leaves a bare "<"
			s = s[i+1:]
			continue
		}
		inner := s[i+1 : i+1+j]
		if !isMarkup(inner) {
			b.WriteByte('<')
			s = s[i+1:]
			continue
		}
		b.WriteString(slackMarkup(inner, dropMentions))
		s = s[i+1+j+1:]
	}
	return slackEntities.Replace(b.String())
}

// isMarkup reports whether the text between "<" and ">" is markup Slack
// writes: a mention, a channel, a special command, or an address with a
// scheme ("https:", "mailto:"), none with spaces before the label.
func isMarkup(inner string) bool {
	target, _, _ := strings.Cut(inner, "|")
	if target == "" || strings.IndexFunc(target, isSpace) >= 0 {
		return false
	}
	switch target[0] {
	case '@', '#', '!':
		return len(target) > 1
	}
	scheme, _, ok := strings.Cut(target, ":")
	return ok && validScheme(scheme)
}

const (
	schemeStart = lowerLetters + upperLetters
	schemeRest  = schemeStart + digits + "+-."
)

// validScheme reports an address scheme as RFC 3986 writes it: a letter,
// then letters, digits, "+", "-" or ".".
func validScheme(scheme string) bool {
	if scheme == "" {
		return false
	}
	for i, r := range scheme {
		allowed := schemeRest
		if i == 0 {
			allowed = schemeStart
		}
		if !strings.ContainsRune(allowed, r) {
			return false
		}
	}
	return true
}

// slackMarkup is what one piece of Slack markup (the text between "<"
// and ">") reads as (see the top of this file).
func slackMarkup(inner string, dropMentions bool) string {
	target, label, _ := strings.Cut(inner, "|")
	switch {
	case strings.HasPrefix(target, "@"):
		if dropMentions {
			return ""
		}
		return labelled("@", target, label)
	case strings.HasPrefix(target, "#"):
		return labelled("#", target, label)
	case strings.HasPrefix(target, "!"):
		return specialMarkup(target, label)
	}
	return linkMarkup(target, label)
}

// labelled is a user or channel mention: its label after the sigil when
// Slack gave one, else the bare id.
func labelled(sigil, target, label string) string {
	if label != "" {
		return sigil + strings.TrimPrefix(label, sigil)
	}
	return target
}

// specialMarkup is a special command ("<!here>") or a user group
// ("<!subteam^S1|@team>"): its label, else "@" and its name or group id.
func specialMarkup(target, label string) string {
	if label != "" {
		return label
	}
	if id, ok := strings.CutPrefix(target[1:], "subteam^"); ok {
		return "@" + id
	}
	name, _, _ := strings.Cut(target[1:], "^")
	return "@" + name
}

// linkMarkup is an address: its label, followed by the address when the
// label is not the address itself as typed.
func linkMarkup(target, label string) string {
	if label == "" || label == target {
		return target
	}
	bare := target
	for _, scheme := range []string{"https://", "http://", "mailto:", "tel:"} {
		bare = strings.TrimPrefix(bare, scheme)
	}
	if label == bare || label == strings.TrimSuffix(bare, "/") {
		return label // an address Slack linked as it was typed
	}
	return label + " (" + target + ")"
}

// isSpace is unicode.IsSpace plus the invisible characters chat clients
// leave in pasted text; it agrees with the chain parser.
func isSpace(r rune) bool {
	switch r {
	case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff':
		return true
	}
	return unicode.IsSpace(r)
}

func trimSpace(s string) string { return strings.TrimFunc(s, isSpace) }

// firstWord splits off the first word of s; rest starts right after it.
func firstWord(s string) (word, rest string) {
	s = strings.TrimLeftFunc(s, isSpace)
	if i := strings.IndexFunc(s, isSpace); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// word is one word of a command or message.
type word struct {
	raw        string // as written
	text       string // quotes removed
	quoted     bool
	start, end int // byte offsets
	col        int // 1-based character column of start
}

// isDashDash reports a lone "--" (or the dash a keyboard made of it).
func (w word) isDashDash() bool {
	return !w.quoted && (w.text == "--" || w.text == "—" || w.text == "–")
}

// flag returns a flag's name (after "--", "—", "–" or a single "-") when
// the word is written as a flag.
func (w word) flag() (string, bool) {
	if w.quoted {
		return "", false
	}
	for _, p := range []string{"--", "—", "–", "-"} {
		if name, ok := strings.CutPrefix(w.text, p); ok {
			if name == "" || !unicode.IsLetter([]rune(name)[0]) {
				return "", false
			}
			if p == "-" {
				return "-" + name, true // "-auto": never a known flag, so refused by name
			}
			return name, true
		}
	}
	return "", false
}

var closingQuotes = map[rune]string{
	'"': `"“”`, '“': `”“"`, '”': `”“"`, '„': `“”"`,
	'\'': `'`, '‘': `’‘'`, '’': `’'`, '«': `»`, '‹': `›`,
}

// splitWords splits s into words at spaces. With quotes, a quote mark at
// the start of a word or right after "=" opens a quoted run that ends at
// its closing mark and may hold spaces; an unclosed one is an error.
// Without quotes, quote marks are plain characters.
func splitWords(s string, quotes bool) ([]word, error) {
	var words []word
	col := 1 // column of byte offset i
	i := 0
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if isSpace(r) {
			i += w
			col++
			continue
		}
		wd, next, err := readWord(s, i, col, quotes)
		if err != nil {
			return nil, err
		}
		words = append(words, wd)
		i, col = wd.end, next
	}
	return words, nil
}

// readWord reads the word of s that starts at byte i, column col, up to
// the next space outside quotes; it returns the column after it.
func readWord(s string, i, col int, quotes bool) (word, int, error) {
	wd := word{start: i, col: col}
	var b strings.Builder
	prev := rune(-1)
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if isSpace(r) {
			break
		}
		closers, opens := closingQuotes[r]
		if quotes && opens && (prev == -1 || prev == '=') {
			inner, n, err := quotedRun(s[i:], closers, col)
			if err != nil {
				return word{}, col, err
			}
			b.WriteString(inner)
			col += 2 + utf8.RuneCountInString(inner)
			i += n
			wd.quoted = wd.quoted || prev == -1
			prev = 'q'
			continue
		}
		b.WriteRune(r)
		prev = r
		i += w
		col++
	}
	wd.end = i
	wd.raw = s[wd.start:wd.end]
	wd.text = b.String()
	return wd, col, nil
}

// quotedRun reads the quoted run s starts with, up to the first of
// closers: the text inside, and the bytes it takes with its two marks.
func quotedRun(s, closers string, col int) (string, int, error) {
	q, w := utf8.DecodeRuneInString(s)
	j := strings.IndexFunc(s[w:], func(c rune) bool { return strings.ContainsRune(closers, c) })
	if j < 0 {
		return "", 0, fmt.Errorf("quote %q at column %d is never closed", string(q), col)
	}
	_, cw := utf8.DecodeRuneInString(s[w+j:])
	return s[w : w+j], w + j + cw, nil
}

// cutWords returns s without the given words (in order) and the spaces
// before each, trimmed.
func cutWords(s string, cut []word) string {
	var b strings.Builder
	pos := 0
	for _, w := range cut {
		end := w.start
		for end > pos {
			r, n := utf8.DecodeLastRuneInString(s[:end])
			if !isSpace(r) {
				break
			}
			end -= n
		}
		b.WriteString(s[pos:end])
		pos = w.end
	}
	b.WriteString(s[pos:])
	return trimSpace(b.String())
}
