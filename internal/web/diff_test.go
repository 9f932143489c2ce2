package web

import (
	"errors"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	for _, tc := range []struct{ name, a, b, want string }{
		{"same", "x\ny\n", "x\ny\n", " x  y"},
		{"added", "x\nz\n", "x\ny\nz\n", " x +y  z"},
		{"removed", "x\ny\nz\n", "x\nz\n", " x -y  z"},
		{"changed", "a\nb\nc\n", "a\nB\nc\n", " a -b +B  c"},
		{"from nothing", "", "a\n", "+a"},
		{"to nothing", "a\nb", "", "-a -b"},
		{"both moved", "1\n2\n3\n4\n", "2\n3\n4\n5\n", "-1  2  3  4 +5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, err := Diff([]byte(tc.a), []byte(tc.b))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range lines {
				got = append(got, string(l.Op)+l.Text)
			}
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("Diff(%q, %q) = %q, want %q", tc.a, tc.b, s, tc.want)
			}
		})
	}
}

// Two attempts whose differing lines multiply past DiffLimit are refused,
// naming the counts; lines they share at the start and end do not count.
func TestDiffRefusesOverTheLimit(t *testing.T) {
	lines := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(prefix)
			b.WriteString(strings.Repeat("x", i%7))
			b.WriteByte('\n')
		}
		return b.String()
	}
	a, b := lines("a", 2001), lines("b", 2000)
	_, err := Diff([]byte(a), []byte(b))
	tl, ok := errors.AsType[*TooLargeError](err)
	if !ok || tl.A != 2001 || tl.B != 2000 || !strings.Contains(err.Error(), "over the limit of 4000000") {
		t.Fatalf("Diff over the limit: %v", err)
	}
	shared := lines("s", 5000)
	if _, err := Diff([]byte(shared+"one\n"+shared), []byte(shared+"two\n"+shared)); err != nil {
		t.Fatalf("a one-line change amid shared lines: %v", err)
	}
}
