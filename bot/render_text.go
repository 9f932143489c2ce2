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

// clock is a moment to the second, in each reader's time zone, with its
// date when it is not on now's day.
func clock(t, now time.Time) string {
	u := t.UTC()
	format, fallback := "{time_secs}", u.Format("15:04:05 UTC")
	if now.IsZero() || !sameDay(u, now.UTC()) {
		format, fallback = "{date_short} {time_secs}", u.Format("Jan 2, 2006 15:04:05 UTC")
	}
	return fmt.Sprintf("<!date^%d^%s|%s>", t.Unix(), format, fallback)
}

var slackUserRE = regexp.MustCompile(`^[UW][A-Z0-9]{2,30}$`)

// who names a person: a Slack user id becomes a mention, anything else (a
// terminal user name) is shown as escaped text.
func who(actor string) string {
	switch {
	case slackUserRE.MatchString(actor):
		return "<@" + actor + ">"
	case strings.TrimSpace(actor) == "":
		return "someone"
	}
	return mdLine(actor, 80)
}

// people names several people once each: "<@U1>, <@U2> and <@U3>".
func people(ids []string) string {
	u := uniq(ids)
	names := mapWho(u[:min(len(u), 10)])
	if extra := len(u) - len(names); extra > 0 {
		names = append(names, fmt.Sprintf("%d more", extra))
	}
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func mapWho(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = who(id)
	}
	return out
}

func uniq(ids []string) []string {
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

// when is a time in each reader's own time zone (Slack's date token),
// falling back to UTC. A time on another day than now shows its date.
func when(t, now time.Time) string {
	if t.IsZero() {
		return "(time unknown)"
	}
	u := t.UTC()
	format, fallback := "{time}", u.Format("15:04 UTC")
	if now.IsZero() || !sameDay(u, now.UTC()) {
		format, fallback = "{date_short} {time}", u.Format("Jan 2, 2006 15:04 UTC")
	}
	return fmt.Sprintf("<!date^%d^%s|%s>", t.Unix(), format, fallback)
}

func at(t, now time.Time) string { return "at " + when(t, now) }

func sameDay(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd
}

func nowOf(r *engine.Run, v View) time.Time {
	if !v.Now.IsZero() {
		return v.Now
	}
	return r.Updated
}

func runElapsed(r *engine.Run, v View) time.Duration {
	end := v.Now
	if r.Finished() || end.IsZero() {
		end = r.Updated
	}
	return end.Sub(r.Created)
}

// duration is an elapsed time the way people read it: 42s, 3m 05s, 1h 02m.
func duration(d time.Duration) string {
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

func money(usd float64) string { return fmt.Sprintf("$%.2f", usd) }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return thousands(n) + " " + word + "s"
}

func thousands(n int) string {
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

func bytesize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func emojiOrQ(emoji string) string {
	if emoji == "" {
		return "❔"
	}
	return emoji
}

// safeURL returns u when it can sit inside a Slack link token, else "".
func safeURL(u string) string {
	if len(u) > 1000 || !(strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) ||
		strings.ContainsAny(u, " <>|\"'`\n\r\t") || engine.Printable(u) != u {
		return ""
	}
	return u
}

// fitValue keeps a button value or private_metadata within its limit. A
// StepRef of a well-formed run id always fits; one that does not is left
// empty, so a click is refused as not gonogo's rather than misread.
func fitValue(s string) string {
	if textLen(s) > maxButtonValue {
		return ""
	}
	return s
}

// textLen counts s the strictest way Slack might: in UTF-16 code units, so
// an emoji outside the Basic Multilingual Plane counts twice. Cutting to
// this count keeps a text within the limit however Slack counts.
func textLen(s string) int {
	n := 0
	for _, r := range s {
		n += runeLen(r)
	}
	return n
}

func runeLen(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// clean makes text from a run (an artifact, a skill name, an agent's
// reason) safe to place in a payload: engine.Printable, the sanitiser the
// terminal and the export use too, so a control character or a
// bidirectional override shows as what it is (␛, <U+202E>) and does
// nothing; newline and tab are kept.
func clean(s string) string { return engine.Printable(s) }

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escape keeps user text from being read as Slack markup: with &, < and >
// escaped, an artifact cannot mention <!channel>, a user or a link.
func escape(s string) string { return escaper.Replace(s) }

// md is user text for a mrkdwn field: cleaned, escaped, and cut to max.
func md(s string, max int) string { return cut(escape(clean(s)), max) }

// mdLine is md on one line: runs of white space, newlines included, become
// one space.
func mdLine(s string, max int) string { return md(oneLine(s, max*4+16), max) }

// plain is user text for a plain_text field, which Slack does not parse:
// cleaned and cut, not escaped.
func plain(s string, max int) string {
	s = clean(s)
	if textLen(s) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	return s[:prefixLen(s, max-1)] + "…"
}

// prefixLen returns the length in bytes of the longest prefix of s that is
// at most max characters long.
func prefixLen(s string, max int) int {
	n := 0
	for i, r := range s {
		if n+runeLen(r) > max {
			return i
		}
		n += runeLen(r)
	}
	return len(s)
}

// oneLine collapses white space. It looks at no more than about limit
// bytes of s, so a megabyte of artifact costs nothing when a line is
// wanted.
func oneLine(s string, limit int) string {
	if limit > 0 && len(s) > limit {
		i := limit
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i] + " …"
	}
	return strings.Join(strings.Fields(s), " ")
}

// cut shortens composed mrkdwn to at most max characters, ending in an
// ellipsis when it cuts. It cuts on a rune boundary and never inside an
// entity (&amp;) or a Slack token (<@U123>, <!date^...>, <url|label>): user
// text is escaped, so every raw < and & comes from gonogo's own markup.
func cut(s string, max int) string {
	if textLen(s) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	head := s[:prefixLen(s, max-1)]
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
