package parse

import (
	"fmt"
	"strings"
)

const planHeadingForm = "expected `#### To execute P<n>: <effort>`"

// planCutExecute reports whether a heading begins with the words "To
// execute" (any case, any spacing) and returns what follows them.
func planCutExecute(txt string) (string, bool) {
	s, ok := planCutFold(txt, "to")
	if !ok {
		return "", false
	}
	t := planTrimLeft(s)
	if len(t) == len(s) {
		return "", false
	}
	t, ok = planCutFold(t, "execute")
	if !ok || t != "" && planWordByte(t[0]) {
		return "", false
	}
	return t, true
}

// planCutFold returns what follows prefix at the start of s, matched
// regardless of case.
func planCutFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return "", false
	}
	return s[len(prefix):], true
}

func planWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func planTrimLeft(s string) string {
	return strings.TrimLeft(s, " \t")
}

// planPToken returns the length of a P-token (P or p, then digits) at the
// start of s, or 0.
func planPToken(s string) int {
	if s == "" || s[0] != 'P' && s[0] != 'p' {
		return 0
	}
	n := planDigits(s[1:], len(s))
	if n == 0 {
		return 0
	}
	return 1 + n
}

// planTokenSeparator returns what follows a separator between two P-tokens
// (" and ", ",", ", and ", "&") at the start of s.
func planTokenSeparator(s string) (string, bool) {
	t := planTrimLeft(s)
	switch {
	case strings.HasPrefix(t, ","):
		t = planTrimLeft(t[1:])
		if u, ok := planCutAnd(t); ok {
			t = u
		}
		return t, true
	case strings.HasPrefix(t, "&"):
		return planTrimLeft(t[1:]), true
	case len(t) < len(s):
		return planCutAnd(t)
	}
	return "", false
}

func planCutAnd(t string) (string, bool) {
	if u, ok := planCutFold(t, "and"); ok && u != "" && (u[0] == ' ' || u[0] == '\t') {
		return planTrimLeft(u), true
	}
	return "", false
}

// planPTokens reads the P-token set at the start of s and returns the
// tokens as "P<n>" and what follows them.
func planPTokens(s string) (tokens []string, rest string) {
	for {
		n := planPToken(s)
		if n == 0 {
			return tokens, s
		}
		tokens = append(tokens, "P"+s[1:n])
		s = s[n:]
		// A separator counts only when another token follows it.
		next, ok := planTokenSeparator(s)
		if !ok || planPToken(next) == 0 {
			return tokens, s
		}
		s = next
	}
}

// planHeading splits a block heading into its P-token set and effort title.
func planHeading(txt string) (tokens []string, effort, problem string) {
	s, _ := planCutExecute(txt)
	if t := planTrimLeft(s); len(t) < len(s) {
		tokens, s = planPTokens(t)
	}
	if len(tokens) == 0 {
		return nil, "", fmt.Sprintf("malformed heading %q: no P-token such as P1 after `To execute` (%s)", txt, planHeadingForm)
	}
	s = planTrimLeft(s)
	if !strings.HasPrefix(s, ":") {
		return tokens, "", fmt.Sprintf("malformed heading %q: no `:` after the P-tokens (%s)", txt, planHeadingForm)
	}
	if effort = strings.TrimSpace(s[1:]); effort == "" {
		return tokens, "", fmt.Sprintf("malformed heading %q: no effort title after the colon (%s)", txt, planHeadingForm)
	}
	return tokens, effort, ""
}
