package parse

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gonogo/gonogo/engine"
)

// Chain reads a chain expression, the Mode B input:
//
//	deliver-prd -> deliver-user-stories --thread -- mobile checkout
//
// Grammar, and the decisions behind it:
//
//   - Steps are skill names separated by ",", "->", "→" (U+2192) or the word
//     "then" (any letter case). All are equivalent and may be mixed; spaces
//     around them are optional ("a,b", "a ->b", "a then b"). The natural
//     English "a, then b" reads as one separator; any other pair of
//     separators in a row is refused, because a name is missing between them.
//     "then" is reserved: it is never a skill name.
//   - Flags (--auto, --force-auto, --dry-run, --thread) are taken out first,
//     wherever they stand, even between steps ("a -> --thread b"). Since
//     phone and desktop keyboards often turn "--" into a dash, "—thread" and
//     "–thread" count as --thread: a typed --dry-run must never silently
//     become context and a real run. For the same reason any other word
//     starting with "--" (before a lone "--") is refused as an unknown flag.
//   - The chain ends after the first name that is not followed by a
//     separator. Everything after it is the shared context, even words that
//     look like skill names, with flags taken out. A lone "--" ends the
//     chain explicitly; everything after it is context as written, flags and
//     all. A "--" inside an implicit context is kept as text, and flags
//     after it are text too.
//   - A separator promises another name: "a ->", "a, then" and "a -> -- ctx"
//     are refused (trailing separator). An expression with no name, or one
//     that starts with a separator, is refused (empty chain).
//   - Names must satisfy engine.ValidSkillName: "Deliver-PRD", "../x" and
//     "a/b" are refused, never lower-cased or cleaned. Duplicates are kept
//     (a team may run a skill twice), and the number of steps is not capped
//     here.
//   - Slack text is tolerated: any Unicode space (NBSP, tabs, newlines) and
//     zero-width characters separate words; straight, curly and back quotes
//     around names are ignored (“deliver-prd” or `deliver-prd`), and one pair
//     of quotes wrapping the whole expression is dropped. The context keeps
//     its quotes and line breaks as written; it is trimmed, and "" when
//     absent.
//
// A refusal is an *engine.Refusal with Source set to expr, Line 1 and a
// message naming the offending token and its column (counted in characters
// from 1).
func Chain(expr string) (engine.ChainExpr, error) {
	if !utf8.ValidString(expr) {
		return engine.ChainExpr{}, chainRefuse(expr, engine.RefuseInvalidInput,
			"the chain expression is not valid UTF-8 text")
	}
	p := chainParser{expr: expr}
	p.lo, p.hi = chainUnwrap(expr)
	p.items = chainLex(expr, p.lo, p.hi)
	return p.parse()
}

// chainFlagNames maps a flag's name (without dashes) to the field it sets.
var chainFlagNames = map[string]func(*engine.Flags){
	"auto":       func(f *engine.Flags) { f.Auto = true },
	"force-auto": func(f *engine.Flags) { f.ForceAuto = true },
	"dry-run":    func(f *engine.Flags) { f.DryRun = true },
	"thread":     func(f *engine.Flags) { f.Thread = true },
}

const chainKnownFlags = "--auto, --force-auto, --dry-run, --thread"

type chainItemKind int

const (
	chainWord     chainItemKind = iota + 1
	chainSep                    // ",", "->", "→" or "then"
	chainFlag                   // a word starting with "--", or a dash-written known flag
	chainDashDash               // a lone "--"
)

type chainItem struct {
	kind       chainItemKind
	text       string // as written
	flag       string // for chainFlag: the flag's name without dashes
	start, end int    // byte offsets into the expression
	col        int    // 1-based character column of start
}

// chainParser reads one expression; it is used once.
type chainParser struct {
	expr   string
	lo, hi int // the part of expr inside an optional wrapping quote pair
	items  []chainItem

	// What parse has read so far.
	out     engine.ChainExpr
	state   chainState
	lastSep chainItem
}

type chainState int

const (
	chainWantFirst chainState = iota // nothing read yet
	chainWantName                    // a separator was read: a name must follow
	chainAfterName                   // a name was read: a separator, or the boundary
)

func (p *chainParser) parse() (engine.ChainExpr, error) {
	p.out = engine.ChainExpr{Source: p.expr}
	p.state = chainWantFirst
	for k, it := range p.items {
		done, err := p.item(k, it)
		if err != nil {
			return engine.ChainExpr{}, err
		}
		if done {
			return p.out, nil
		}
	}
	switch p.state {
	case chainWantFirst:
		return engine.ChainExpr{}, chainRefuse(p.expr, engine.RefuseEmptyChain,
			"the chain names no skill: give one or more skill names separated by \",\", \"->\" or \"then\"")
	case chainWantName:
		return engine.ChainExpr{}, chainRefuse(p.expr, engine.RefuseTrailingSeparator,
			"trailing separator %q at column %d: a separator must be followed by a skill name", p.lastSep.text, p.lastSep.col)
	}
	return p.out, nil
}

// item reads item k; done reports that the chain, and so the expression,
// ended at it.
func (p *chainParser) item(k int, it chainItem) (done bool, err error) {
	switch it.kind {
	case chainFlag:
		return false, p.setFlag(&p.out.Flags, it)
	case chainDashDash:
		return true, p.dashDash(it)
	case chainSep:
		return false, p.separator(it)
	case chainWord:
		return p.word(k, it)
	}
	return false, nil
}

// dashDash ends the chain explicitly: what follows is the context as written.
func (p *chainParser) dashDash(it chainItem) error {
	switch p.state {
	case chainWantFirst:
		return chainRefuse(p.expr, engine.RefuseEmptyChain,
			"no skill name before %q at column %d: a chain needs at least one skill", it.text, it.col)
	case chainWantName:
		return chainRefuse(p.expr, engine.RefuseTrailingSeparator,
			"separator %q at column %d is followed by %q instead of a skill name", p.lastSep.text, p.lastSep.col, it.text)
	}
	p.out.Context, p.out.ExplicitContext = chainTrimSpace(p.expr[it.end:p.hi]), true
	return nil
}

// separator reads a separator, which must follow a name; "a, then b"
// reads as one separator.
func (p *chainParser) separator(it chainItem) error {
	switch p.state {
	case chainWantFirst:
		return chainRefuse(p.expr, engine.RefuseEmptyChain,
			"the chain starts with separator %q at column %d: a skill name must come first", it.text, it.col)
	case chainWantName:
		if p.lastSep.text == "," && chainIsThen(it.text) {
			p.lastSep = it
			return nil
		}
		return chainRefuse(p.expr, engine.RefuseParseError,
			"separator %q at column %d follows separator %q at column %d: a skill name is missing between them",
			it.text, it.col, p.lastSep.text, p.lastSep.col)
	}
	p.state, p.lastSep = chainWantName, it
	return nil
}

// word reads item k, a word: a skill name, or, right after a name, the
// start of the implicit context, which ends the chain (done).
func (p *chainParser) word(k int, it chainItem) (done bool, err error) {
	name := chainTrimQuotes(it.text)
	if name == "" {
		return false, nil // a stray quote is whitespace
	}
	if p.state == chainAfterName {
		ctx, err := p.context(k, &p.out.Flags)
		if err != nil {
			return false, err
		}
		p.out.Context = ctx
		return true, nil
	}
	if !engine.ValidSkillName(name) {
		return false, chainRefuse(p.expr, engine.RefuseInvalidSkillName,
			"invalid skill name %q at column %d: %s", name, it.col, chainNameProblem(name))
	}
	p.out.Names = append(p.out.Names, name)
	p.state = chainAfterName
	return false, nil
}

// context returns the implicit context starting at item k: the text as
// written with flags cut out, up to the end or, after a lone "--", as is.
func (p *chainParser) context(k int, flags *engine.Flags) (string, error) {
	var b strings.Builder
	pos := p.items[k].start
	for _, it := range p.items[k+1:] {
		if it.kind == chainDashDash {
			break
		}
		if it.kind != chainFlag {
			continue
		}
		if err := p.setFlag(flags, it); err != nil {
			return "", err
		}
		// Cut the flag with the space before it, so "a --thread b" leaves "a b".
		b.WriteString(p.expr[pos:chainSpaceEnd(p.expr, pos, it.start)])
		pos = it.end
	}
	b.WriteString(p.expr[pos:p.hi])
	return chainTrimSpace(b.String()), nil
}

func (p *chainParser) setFlag(f *engine.Flags, it chainItem) error {
	set, ok := chainFlagNames[it.flag]
	if !ok {
		return p.unknownFlag(it)
	}
	set(f)
	return nil
}

func (p *chainParser) unknownFlag(it chainItem) error {
	return chainRefuse(p.expr, engine.RefuseInvalidInput,
		"unknown flag %q at column %d: the flags are %s (to pass text that starts with \"--\", put it after a lone \"--\")",
		it.text, it.col, chainKnownFlags)
}

func chainRefuse(expr string, reason engine.RefusalReason, format string, args ...any) *engine.Refusal {
	return &engine.Refusal{
		Reason:  reason,
		Message: fmt.Sprintf(format, args...),
		Source:  expr,
		Line:    1,
	}
}

// chainNameProblem says why a name fails engine.ValidSkillName.
func chainNameProblem(name string) string {
	switch {
	case len(name) > 128:
		return "skill names are at most 128 characters"
	case strings.ContainsAny(name, `/\`) || strings.Contains(name, ".."):
		return "a skill name is a plain name, not a path"
	case strings.ToLower(name) != name && engine.ValidSkillName(strings.ToLower(name)):
		return "skill names are lower case"
	}
	return "skill names are lower-case letters, digits and dashes, starting with a letter or digit"
}

// chainLex splits expr[lo:hi] into words, separators, flags and "--".
func chainLex(expr string, lo, hi int) []chainItem {
	l := &chainLexer{expr: expr, hi: hi, col: 1}
	for i := lo; i < hi; {
		i = l.next(i)
	}
	return l.items
}

// chainLexer holds what chainLex has read so far of expr[:hi].
type chainLexer struct {
	expr  string
	hi    int
	items []chainItem
	// col is the column of byte offset colPos, advanced monotonically so
	// that counting columns stays linear.
	col, colPos int
}

// next reads the item (or the space) at i and returns where the next one
// starts.
func (l *chainLexer) next(i int) int {
	rest := l.expr[i:l.hi]
	r, w := utf8.DecodeRuneInString(rest)
	switch {
	case chainIsSpace(r):
		return i + w
	case r == ',' || r == '→':
		l.add(chainSep, i, i+w)
		return i + w
	case strings.HasPrefix(rest, "->"):
		l.add(chainSep, i, i+2)
		return i + 2
	case strings.HasPrefix(rest, "--"):
		return l.dashes(i)
	case r == '—' || r == '–':
		return l.dash(i, w)
	}
	return l.word(i)
}

// dashes reads a word starting "--": "--" itself, a flag, or a rule.
func (l *chainLexer) dashes(i int) int {
	end := chainWordEnd(l.expr, i+2, l.hi)
	text := l.expr[i:end]
	switch {
	case text == "--":
		l.add(chainDashDash, i, end)
	case strings.Trim(text, "-") == "":
		l.add(chainWord, i, end) // a "---" rule is text, not a flag
	default:
		l.add(chainFlag, i, end).flag = text[2:]
	}
	return end
}

// dash reads a word starting with an em or en dash (w bytes long), which a
// chat client may have made of "--": a flag when a flag's name follows.
func (l *chainLexer) dash(i, w int) int {
	end := chainWordEnd(l.expr, i+w, l.hi)
	if _, ok := chainFlagNames[l.expr[i+w:end]]; ok {
		l.add(chainFlag, i, end).flag = l.expr[i+w : end]
		return end
	}
	end = chainWordEnd(l.expr, i, l.hi)
	l.add(chainWord, i, end)
	return end
}

// word reads a skill name, or "then", which separates like an arrow.
func (l *chainLexer) word(i int) int {
	end := chainWordEnd(l.expr, i, l.hi)
	kind := chainWord
	if chainIsThen(l.expr[i:end]) {
		kind = chainSep
	}
	l.add(kind, i, end)
	return end
}

func (l *chainLexer) add(kind chainItemKind, start, end int) *chainItem {
	l.col += utf8.RuneCountInString(l.expr[l.colPos:start])
	l.colPos = start
	l.items = append(l.items, chainItem{kind: kind, text: l.expr[start:end], start: start, end: end, col: l.col})
	return &l.items[len(l.items)-1]
}

// chainWordEnd returns where the word starting at i ends: at a space, a
// comma, an arrow, or the end.
func chainWordEnd(expr string, i, hi int) int {
	for i < hi {
		r, w := utf8.DecodeRuneInString(expr[i:hi])
		if chainIsSpace(r) || r == ',' || r == '→' || strings.HasPrefix(expr[i:hi], "->") {
			break
		}
		i += w
	}
	return i
}

func chainIsThen(word string) bool {
	return strings.EqualFold(chainTrimQuotes(word), "then")
}

// chainIsSpace is unicode.IsSpace plus the invisible characters chat
// clients leave in pasted text.
func chainIsSpace(r rune) bool {
	switch r {
	case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff':
		return true
	}
	return unicode.IsSpace(r)
}

func chainTrimSpace(s string) string {
	return strings.TrimFunc(s, chainIsSpace)
}

const chainQuotes = "\"'`“”‘’„‚«»‹›"

func chainTrimQuotes(s string) string {
	return strings.Trim(s, chainQuotes)
}

// chainUnwrap returns the bounds of expr inside one pair of quotes wrapping
// all of it, when neither quote mark occurs inside; otherwise all of expr.
func chainUnwrap(expr string) (lo, hi int) {
	lo, hi = chainSpaceBounds(expr)
	open, ow := utf8.DecodeRuneInString(expr[lo:hi])
	closing, cw := utf8.DecodeLastRuneInString(expr[lo:hi])
	if hi-lo <= ow+cw {
		return 0, len(expr)
	}
	want, ok := chainQuotePairs[open]
	inner := expr[lo+ow : hi-cw]
	if !ok || closing != want || strings.ContainsRune(inner, open) || strings.ContainsRune(inner, closing) {
		return 0, len(expr)
	}
	return lo + ow, hi - cw
}

// chainQuotePairs maps each opening quote mark to its closing one.
var chainQuotePairs = map[rune]rune{'"': '"', '\'': '\'', '`': '`', '“': '”', '‘': '’', '„': '“', '«': '»', '‹': '›'}

// chainSpaceBounds returns the bounds of expr without the spaces
// (chainIsSpace) around it.
func chainSpaceBounds(expr string) (lo, hi int) {
	lo, hi = 0, len(expr)
	for lo < hi {
		r, w := utf8.DecodeRuneInString(expr[lo:])
		if !chainIsSpace(r) {
			break
		}
		lo += w
	}
	return lo, chainSpaceEnd(expr, lo, hi)
}

// chainSpaceEnd moves hi back over the spaces (chainIsSpace) that end
// expr[lo:hi].
func chainSpaceEnd(expr string, lo, hi int) int {
	for hi > lo {
		r, w := utf8.DecodeLastRuneInString(expr[:hi])
		if !chainIsSpace(r) {
			break
		}
		hi -= w
	}
	return hi
}
