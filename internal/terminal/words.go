package terminal

import (
	"os"
	"strings"

	"golang.org/x/term"
)

// Exit codes of run, resume and check.
const (
	ExitOK      = 0 // completed, or (check) accepted
	ExitRefused = 1 // refused before any step ran, halted on a FAILED step, or aborted
	ExitUsage   = 2 // usage, I/O or configuration error
	ExitWaiting = 3 // left waiting for a decision
)

func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ClipLeft keeps the end of s, where a path's file name is.
func ClipLeft(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// terminalLike is a reader or writer that says whether it is a terminal;
// tests stand in for one with it.
type terminalLike interface{ Terminal() bool }

func IsTerminal(v any) bool {
	if t, ok := v.(terminalLike); ok {
		return t.Terminal()
	}
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func EffortSuffix(effort string, tokens []string) string {
	var parts []string
	if len(tokens) > 0 {
		parts = append(parts, strings.Join(tokens, "+"))
	}
	if effort != "" {
		parts = append(parts, effort)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ": ") + ")"
}
