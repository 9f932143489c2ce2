package bot

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gonogo/gonogo/engine"
)

// rdClock is a moment to the second, in each reader's time zone, with its
// date when it is not on now's day.
func rdClock(t, now time.Time) string {
	u := t.UTC()
	format, fallback := "{time_secs}", u.Format("15:04:05 UTC")
	if now.IsZero() || !rdSameDay(u, now.UTC()) {
		format, fallback = "{date_short} {time_secs}", u.Format("Jan 2, 2006 15:04:05 UTC")
	}
	return fmt.Sprintf("<!date^%d^%s|%s>", t.Unix(), format, fallback)
}

var rdSlackUserRE = regexp.MustCompile(`^[UW][A-Z0-9]{2,30}$`)

// rdWho names a person: a Slack user id becomes a mention, anything else (a
// terminal user name) is shown as escaped text.
func rdWho(actor string) string {
	switch {
	case rdSlackUserRE.MatchString(actor):
		return "<@" + actor + ">"
	case strings.TrimSpace(actor) == "":
		return "someone"
	}
	return rdMdLine(actor, 80)
}

// rdPeople names several people once each: "<@U1>, <@U2> and <@U3>".
func rdPeople(ids []string) string {
	u := rdUniq(ids)
	names := rdMapWho(u[:min(len(u), 10)])
	if extra := len(u) - len(names); extra > 0 {
		names = append(names, fmt.Sprintf("%d more", extra))
	}
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func rdMapWho(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = rdWho(id)
	}
	return out
}

func rdUniq(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// rdWhen is a time in each reader's own time zone (Slack's date token),
// falling back to UTC. A time on another day than now shows its date.
func rdWhen(t, now time.Time) string {
	if t.IsZero() {
		return "(time unknown)"
	}
	u := t.UTC()
	format, fallback := "{time}", u.Format("15:04 UTC")
	if now.IsZero() || !rdSameDay(u, now.UTC()) {
		format, fallback = "{date_short} {time}", u.Format("Jan 2, 2006 15:04 UTC")
	}
	return fmt.Sprintf("<!date^%d^%s|%s>", t.Unix(), format, fallback)
}

func rdAt(t, now time.Time) string { return "at " + rdWhen(t, now) }

func rdSameDay(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd
}

func rdNowOf(r *engine.Run, v View) time.Time {
	if !v.Now.IsZero() {
		return v.Now
	}
	return r.Updated
}

func rdRunElapsed(r *engine.Run, v View) time.Duration {
	end := v.Now
	if r.Finished() || end.IsZero() {
		end = r.Updated
	}
	return end.Sub(r.Created)
}

// rdDuration is an elapsed time the way people read it: 42s, 3m 05s, 1h 02m.
func rdDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Round(time.Second)
	h, m, s := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	switch {
	case h >= 24:
		return fmt.Sprintf("%dd %02dh", h/24, h%24)
	case h > 0:
		return fmt.Sprintf("%dh %02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm %02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

func rdMoney(usd float64) string { return fmt.Sprintf("$%.2f", usd) }

func rdPlural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return rdThousands(n) + " " + word + "s"
}

func rdThousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func rdBytesize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func rdOrQ(emoji string) string {
	if emoji == "" {
		return "❔"
	}
	return emoji
}

// rdSafeURL returns u when it can sit inside a Slack link token, else "".
func rdSafeURL(u string) string {
	if len(u) > 1000 || !(strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) ||
		strings.ContainsAny(u, " <>|\"'`\n\r\t") || strings.ContainsFunc(u, rdUnwanted) {
		return ""
	}
	return u
}

// rdValue keeps a button value or private_metadata within its limit. A
// StepRef of a well-formed run id always fits; one that does not is left
// empty, so a click is refused as not gonogo's rather than misread.
func rdValue(s string) string {
	if rdTextLen(s) > rdMaxButtonValue {
		return ""
	}
	return s
}

// rdTextLen counts s the strictest way Slack might: in UTF-16 code units, so
// an emoji outside the Basic Multilingual Plane counts twice. Cutting to
// this count keeps a text within the limit however Slack counts.
func rdTextLen(s string) int {
	n := 0
	for _, r := range s {
		n += rdRuneLen(r)
	}
	return n
}

func rdRuneLen(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// rdClean makes text from a run (an artifact, a skill name, an agent's
// reason) safe to place in a payload: valid UTF-8, no control characters
// but newline and tab, no carriage returns, and none of the bidirectional
// overrides that could make a line read differently from what it says.
func rdClean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !strings.ContainsFunc(s, rdUnwanted) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if rdUnwanted(r) {
			return -1
		}
		return r
	}, s)
}

func rdUnwanted(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029, r == 0xfeff:
		return true
	}
	return false
}

var rdEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// rdEscape keeps user text from being read as Slack markup: with &, < and >
// escaped, an artifact cannot mention <!channel>, a user or a link.
func rdEscape(s string) string { return rdEscaper.Replace(s) }

// rdMd is user text for a mrkdwn field: cleaned, escaped, and cut to max.
func rdMd(s string, max int) string { return rdCut(rdEscape(rdClean(s)), max) }

// rdMdLine is rdMd on one line: runs of white space, newlines included, become
// one space.
func rdMdLine(s string, max int) string { return rdMd(rdOneLine(s, max*4+16), max) }

// rdPlain is user text for a plain_text field, which Slack does not parse:
// cleaned and cut, not escaped.
func rdPlain(s string, max int) string {
	s = rdClean(s)
	if rdTextLen(s) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	return s[:rdPrefix(s, max-1)] + "…"
}

// rdPrefix returns the length in bytes of the longest prefix of s that is
// at most max characters long.
func rdPrefix(s string, max int) int {
	n := 0
	for i, r := range s {
		if n+rdRuneLen(r) > max {
			return i
		}
		n += rdRuneLen(r)
	}
	return len(s)
}

// rdOneLine collapses white space. It looks at no more than about limit
// bytes of s, so a megabyte of artifact costs nothing when a line is
// wanted.
func rdOneLine(s string, limit int) string {
	if limit > 0 && len(s) > limit {
		i := limit
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i] + " …"
	}
	return strings.Join(strings.Fields(s), " ")
}

// rdCut shortens composed mrkdwn to at most max characters, ending in an
// ellipsis when it cuts. It cuts on a rune boundary and never inside an
// entity (&amp;) or a Slack token (<@U123>, <!date^...>, <url|label>): user
// text is escaped, so every raw < and & comes from gonogo's own markup.
func rdCut(s string, max int) string {
	if rdTextLen(s) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	head := s[:rdPrefix(s, max-1)]
	for {
		lt, amp := strings.LastIndexByte(head, '<'), strings.LastIndexByte(head, '&')
		switch {
		case lt > strings.LastIndexByte(head, '>'):
			head = head[:lt]
		case amp > strings.LastIndexByte(head, ';'):
			head = head[:amp]
		default:
			return head + "…"
		}
	}
}
