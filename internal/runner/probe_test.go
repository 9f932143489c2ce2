package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

// The probe answers the engine's file and command conditions on this
// machine: files under its directory, commands run there with the output
// on stdin.
func TestProbeChecksConditions(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "present.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := []byte("```json\n{\"status\": \"ok\"}\n```")
	for _, tc := range []struct {
		c    engine.Condition
		want string // "" when the condition holds
	}{
		{engine.Condition{Kind: engine.CondFileExists, Path: "present.md"}, ""},
		{engine.Condition{Kind: engine.CondFileExists, Path: "missing.md"}, "file missing.md does not exist"},
		{engine.Condition{Kind: engine.CondFileAbsent, Path: "missing.md"}, ""},
		{engine.Condition{Kind: engine.CondFileAbsent, Path: "present.md"}, "file present.md exists, and must not"},
		{engine.Condition{Kind: engine.CondCommand, Command: []string{"sh", "-c", "grep -q status"}}, ""},
		{engine.Condition{Kind: engine.CondCommand, Command: []string{"sh", "-c", "test -f present.md"}}, ""},
		{engine.Condition{Kind: engine.CondCommand, Command: []string{"sh", "-c", "echo broken build >&2; exit 3"}}, "command `sh -c echo broken build >&2; exit 3` exited 3: broken build"},
		{engine.Condition{Kind: engine.CondCommand, Command: []string{"gonogo-no-such-program"}}, "could not run"},
	} {
		err := engine.CheckConditions(context.Background(), []engine.Condition{tc.c}, out, Probe{Dir: dir})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.c, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: got %v, want %q", tc.c, err, tc.want)
		}
	}
}

func TestCommandConditionsDoNotSeeSecrets(t *testing.T) {
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-not-for-conditions")
	err := engine.CheckConditions(context.Background(), []engine.Condition{{Kind: engine.CondCommand, Command: []string{"sh", "-c", `test -z "$SLACK_BOT_TOKEN" || { echo "saw $SLACK_BOT_TOKEN" >&2; exit 1; }`}}}, nil, Probe{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("the command saw the token: %v", err)
	}
}
