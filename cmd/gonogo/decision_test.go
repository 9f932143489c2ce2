package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/internal/terminal"
)

// stepDecisions is what each front end says step n of a run was decided:
// the table a run or resume closes with (out), show, show --json, export
// (JSON) and export --format md. A step with no decision reads "-".
func stepDecisions(t *testing.T, vars map[string]string, id, out string, n int) map[string]string {
	t.Helper()
	got := map[string]string{"closing table": tableDecision(t, out, n)}
	show := gonogo(t, vars, "", "show", id)
	if show.code != terminal.ExitOK {
		t.Fatalf("show: exit %d\n%s%s", show.code, show.stdout, show.stderr)
	}
	got["show"] = tableDecision(t, show.stdout, n)
	orDash := func(s *string) string {
		if s == nil {
			return "-"
		}
		return *s
	}
	got["show --json"] = orDash(showRun(t, vars, id).Steps[n-1].Decision)

	js := gonogo(t, vars, "", "export", id)
	var trail struct{ Steps []struct{ Decision *string } }
	if err := json.Unmarshal([]byte(js.stdout), &trail); js.code != terminal.ExitOK || err != nil {
		t.Fatalf("export: exit %d, %v\n%s%s", js.code, err, js.stdout, js.stderr)
	}
	got["export json"] = orDash(trail.Steps[n-1].Decision)

	md := gonogo(t, vars, "", "export", id, "--format", "md")
	got["export md"] = "(no row)"
	for _, line := range strings.Split(md.stdout, "\n") {
		// | Step | Skill | Result | Decision | Who | ...
		cells := strings.Split(line, " | ")
		if len(cells) > 4 && cells[0] == "| "+strconv.Itoa(n) && !strings.Contains(line, "UTC") {
			got["export md"] = strings.ReplaceAll(cells[3], "—", "-")
			break
		}
	}
	return got
}

// tableDecision reads step n's decision from the steps table gonogo prints
// (# step result decision artifact).
func tableDecision(t *testing.T, out string, n int) string {
	t.Helper()
	in := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 4 && f[0] == "#" && f[3] == "decision":
			in = true
		case in && len(f) >= 4 && f[0] == strconv.Itoa(n):
			return f[3]
		}
	}
	t.Fatalf("no row for step %d in the steps table:\n%s", n, out)
	return ""
}

func wantEverywhere(t *testing.T, got map[string]string, want string) {
	t.Helper()
	for where, d := range got {
		if d != want {
			t.Errorf("%s says step 1 was decided %q, want %q", where, d, want)
		}
	}
}

// A step in guarded auto whose attempt 1 FAILED, was redone, and whose
// redo PRODUCED and went on by itself reads auto in the closing table,
// show, show --json and both exports: the redo was attempt 1's.
func TestRedoneStepThatWentOnReadsAutoEverywhere(t *testing.T) {
	vars := baseVars(t)
	calls := filepath.Join(t.TempDir(), "calls")
	vars["GONOGO_RUNNER"] = "command"
	vars["GONOGO_RUNNER_CMD"] = writeAgent(t, `cat >/dev/null
if [ "$GONOGO_STEP" = 1 ] && [ ! -f `+calls+` ]; then : > `+calls+`; echo "the agent fell over" >&2; exit 1; fi
printf '# %s\n\nOUTPUT-OF-STEP-%s: a paragraph of real work.\n' "$GONOGO_SKILL" "$GONOGO_STEP"`)
	run := gonogo(t, vars, "redo try again\n", "run", "--force-auto", "--chain", "deliver-prd -> measure-experiment-design -- x")
	if run.code != terminal.ExitOK || !strings.Contains(run.stdout, "Run complete") {
		t.Fatalf("run: exit %d\n%s%s", run.code, run.stdout, run.stderr)
	}
	id := runID(t, run.stdout)
	st := showRun(t, vars, id).Steps[0]
	if len(st.Attempts) != 2 || *st.Attempts[0].Result != "FAILED" || *st.Attempts[1].Result != "PRODUCED" {
		t.Fatalf("step 1's attempts: %+v", st.Attempts)
	}
	wantEverywhere(t, stepDecisions(t, vars, id, run.stdout, 1), "auto")
}

// A step held by a pause and let go as the run resumed in auto reads auto
// everywhere too.
func TestHeldStepLetGoReadsAutoEverywhere(t *testing.T) {
	vars := baseVars(t)
	gate := gatedAgent(t, vars)
	s := startSession(t, vars, "run", "--force-auto", "--chain", "deliver-prd, measure-experiment-design -- x")
	s.waitFor("▶ Step 1 of 2", 1)
	s.say("p")
	s.waitFor("Run paused by tester", 1)
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.waitFor("[c]ontinue auto >", 1)
	s.say("c")
	s.waitFor("Run complete", 1)
	if code := s.exit(); code != terminal.ExitOK {
		t.Fatalf("exit %d\n%s", code, s.out.String())
	}
	out := s.out.String()
	id := runID(t, out)
	released := false
	for _, ev := range showRun(t, vars, id).Journal {
		released = released || ev.Type == "step-released" && ev.Step == 1
	}
	if !released {
		t.Fatal("step 1 was not held and let go")
	}
	wantEverywhere(t, stepDecisions(t, vars, id, out, 1), "auto")
}
