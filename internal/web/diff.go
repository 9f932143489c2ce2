package web

import (
	"bytes"
	"fmt"
)

// DiffLimit bounds the work of a diff: the lines of the two attempts
// that differ (once the lines they start and end with alike are set
// aside) multiplied together may be at most this many. A diff over it is
// refused, not cut short.
const DiffLimit = 4_000_000

// Op is what a diff line does: kept, added (only in b) or removed (only
// in a).
type Op byte

const (
	Same    Op = ' '
	Added   Op = '+'
	Removed Op = '-'
)

// Line is one line of a diff.
type Line struct {
	Op   Op
	Text string
}

// TooLargeError refuses a diff over DiffLimit.
type TooLargeError struct{ A, B int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the attempts differ on %d and %d lines, %d pairs to compare, over the limit of %d: download both and compare them with diff",
		e.A, e.B, e.A*e.B, DiffLimit)
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	parts := bytes.Split(b, []byte("\n"))
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

// Diff is the line diff that turns a into b, from a longest common
// subsequence of their lines.
func Diff(a, b []byte) ([]Line, error) {
	x, y := splitLines(a), splitLines(b)
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	if len(mx) > 0 && len(my) > 0 && len(mx) > DiffLimit/len(my) {
		return nil, &TooLargeError{A: len(mx), B: len(my)}
	}
	out := make([]Line, 0, len(x)+len(y))
	for _, l := range x[:pre] {
		out = append(out, Line{Same, l})
	}
	out = append(out, lcsDiff(mx, my)...)
	for _, l := range x[len(x)-suf:] {
		out = append(out, Line{Same, l})
	}
	return out, nil
}

// lcsDiff diffs x and y by the table of their suffixes' longest common
// subsequences: len(x)+1 by len(y)+1 cells.
func lcsDiff(x, y []string) []Line {
	n, m := len(x), len(y)
	w := m + 1
	t := make([]int32, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				t[i*w+j] = t[(i+1)*w+j+1] + 1
			} else {
				t[i*w+j] = max(t[(i+1)*w+j], t[i*w+j+1])
			}
		}
	}
	out := make([]Line, 0, n+m)
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case x[i] == y[j]:
			out = append(out, Line{Same, x[i]})
			i++
			j++
		case t[(i+1)*w+j] >= t[i*w+j+1]:
			out = append(out, Line{Removed, x[i]})
			i++
		default:
			out = append(out, Line{Added, y[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, Line{Removed, x[i]})
	}
	for ; j < m; j++ {
		out = append(out, Line{Added, y[j]})
	}
	return out
}

func (l Line) IsAdded() bool   { return l.Op == Added }
func (l Line) IsRemoved() bool { return l.Op == Removed }
