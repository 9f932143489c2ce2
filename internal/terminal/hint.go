package terminal

import (
	"path/filepath"
	"strings"
)

// DefaultData is the data directory when neither --data nor
// GONOGO_DATA_DIR names one (config's default, cleaned).
const DefaultData = "gonogo-data"

// DataFlag is what a command gonogo suggests (gonogo resume RUN, gonogo show
// RUN --artifact N) needs after its arguments to find the run in data:
// nothing for the default data directory, else " --data DIR", so that the
// line works as printed from the same directory.
func DataFlag(data string) string {
	if data == "" || filepath.Clean(data) == DefaultData {
		return ""
	}
	return " --data " + ShellWord(data)
}

// ShellWord quotes s for a POSIX shell when it holds anything but
// characters that are safe bare.
func ShellWord(s string) string {
	if s != "" && strings.IndexFunc(s, shellUnsafe) < 0 && s[0] != '~' {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellUnsafe reports whether r needs quoting in a POSIX shell word.
func shellUnsafe(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,~", r))
}
