package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/terminal"
)

// The commands gonogo suggests work as printed: with the run's data
// directory named when it is not the default, they find the run from a
// shell that has no GONOGO_DATA_DIR.
func TestSuggestedCommandsNameTheDataDirectory(t *testing.T) {
	vars := baseVars(t)
	workAgent(t, vars)
	res := gonogo(t, vars, "", "run", "--chain", "deliver-prd -- saved searches")
	if res.code != terminal.ExitWaiting {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	bare := map[string]string{}
	for k, v := range vars {
		if k != "GONOGO_DATA_DIR" {
			bare[k] = v
		}
	}
	for _, pat := range []string{`\(gonogo (show [^)]*)\)`, `Continue with: gonogo (resume .*)`} {
		m := regexp.MustCompile(pat).FindStringSubmatch(res.stdout)
		if m == nil {
			t.Fatalf("no %s in the output:\n%s", pat, res.stdout)
		}
		if !strings.Contains(m[1], " --data "+vars["GONOGO_DATA_DIR"]) {
			t.Errorf("%q does not name the data directory %s", m[1], vars["GONOGO_DATA_DIR"])
		}
		got := gonogo(t, bare, "abort\n", strings.Fields(m[1])...)
		if got.code == terminal.ExitUsage {
			t.Errorf("gonogo %s, as printed: exit %d\n%s", m[1], got.code, got.stderr)
		}
	}
}

func TestOnData(t *testing.T) {
	for data, want := range map[string]string{
		"":               "",
		"./gonogo-data":  "",
		"gonogo-data/":   "",
		"/tmp/d":         " --data /tmp/d",
		"my runs":        " --data 'my runs'",
		"it's":           ` --data 'it'\''s'`,
		"~/not-expanded": " --data '~/not-expanded'",
	} {
		if got := terminal.DataFlag(data); got != want {
			t.Errorf("onData(%q) = %q, want %q", data, got, want)
		}
	}
}
