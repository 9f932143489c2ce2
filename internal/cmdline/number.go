package cmdline

import (
	"fmt"
	"strconv"
	"strings"
)

// NumberFlag is a flag whose value counts from 1 (a step, an attempt).
// 0, a negative number or a word is refused as the flag is read (a usage
// error), never taken as the flag left out.
type NumberFlag struct {
	N    *int
	What string // "step", "attempt"
}

func (v NumberFlag) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return fmt.Errorf("not %s number (1, 2, ...)", article(v.What))
	}
	*v.N = n
	return nil
}

func (v NumberFlag) String() string {
	if v.N == nil || *v.N == 0 {
		return ""
	}
	return strconv.Itoa(*v.N)
}

func (v NumberFlag) Type() string { return "int" }

func article(noun string) string {
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}
