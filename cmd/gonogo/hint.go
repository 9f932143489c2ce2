package main

import (
	"path/filepath"
	"strings"
)

// defaultData is the data directory when neither --data nor
// GONOGO_DATA_DIR names one (config's default, cleaned).
const defaultData = "gonogo-data"

// onData is what a command gonogo suggests (gonogo resume RUN, gonogo show
// RUN --artifact N) needs after its arguments to find the run in data:
// nothing for the default data directory, else " --data DIR", so that the
// line works as printed from the same directory.
func onData(data string) string {
	if data == "" || filepath.Clean(data) == defaultData {
		return ""
	}
	return " --data " + shellWord(data)
}

// shellWord quotes s for a POSIX shell when it holds anything but
// characters that are safe bare.
func shellWord(s string) string {
	safe := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,~", r)
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !safe(r) }) < 0 && s[0] != '~' {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
