package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultStatsSince is the period gonogo stats covers when not told.
const DefaultStatsSince = "30d"

// ParseSince reads the start of a stats period, as gonogo stats --since
// and /gonogo stats --since take it: a count of hours, days or weeks back
// from now ("36h", "30d", "4w"), or a date ("2026-03-01", from its
// midnight UTC) or a time (RFC 3339). "all" is the whole journal (the zero
// time). Anything else is an error naming what is accepted.
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "all" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if len(s) >= 2 {
		unit := map[byte]time.Duration{'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[s[len(s)-1]]
		n, err := strconv.Atoi(s[:len(s)-1])
		if unit != 0 && err == nil && n > 0 && n <= 100000 && s[0] != '+' {
			return now.Add(-time.Duration(n) * unit), nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: give hours, days or weeks back (36h, 30d, 4w), a date (2026-03-01), or all", clipText(s, 40))
}

// clipText shortens s to n runes for a message.
func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
