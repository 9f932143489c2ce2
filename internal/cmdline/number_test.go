package cmdline

import "testing"

// A step or attempt number counts from 1: 0, a negative number or a word
// is refused, naming what was expected, and leaves the value unset.
func TestNumberFlagCountsFromOne(t *testing.T) {
	for in, want := range map[string]string{"0": "not a step number (1, 2, ...)", "-2": "not a step number (1, 2, ...)", "two": "not a step number (1, 2, ...)"} {
		var n int
		if err := (NumberFlag{N: &n, What: "step"}).Set(in); err == nil || err.Error() != want || n != 0 {
			t.Errorf("Set(%q): n=%d, err %v; want %q", in, n, err, want)
		}
	}
	var n int
	if err := (NumberFlag{N: &n, What: "attempt"}).Set("x"); err == nil || err.Error() != "not an attempt number (1, 2, ...)" {
		t.Errorf("attempt: %v", err)
	}
	f := NumberFlag{N: &n, What: "step"}
	if err := f.Set(" 3 "); err != nil || n != 3 || f.String() != "3" {
		t.Errorf("Set(\" 3 \"): n=%d, String %q, err %v", n, f.String(), err)
	}
}
