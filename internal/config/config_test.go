package config

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"

	"github.com/gonogo/gonogo/engine"
)

func TestRecordedRunnerArgumentsSurviveQuoting(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--model", "opus"},
		{"--append-system-prompt", "Be brief. Don't pad; use \"quotes\" and $HOME and `ticks` \\ as they are."},
		{"", "a b", "it's", "'''"},
	} {
		got, err := SplitArgs(ShellQuote(args))
		if err != nil || !slices.Equal(got, args) && len(got)+len(args) > 0 {
			t.Errorf("%q: quoted %s, split back %q, %v", args, ShellQuote(args), got, err)
		}
	}
}

// TestLoadNamesTheVariable: a malformed or out-of-range value is refused
// naming its variable, what it holds and a good value.
func TestLoadNamesTheVariable(t *testing.T) {
	for _, tc := range []struct {
		name, value, want string
	}{
		{"GONOGO_STEP_TIMEOUT", "10", `GONOGO_STEP_TIMEOUT="10" is not a duration with a unit (s, m or h); for example GONOGO_STEP_TIMEOUT=30m`},
		{"GONOGO_STEP_TIMEOUT", "-1m", "GONOGO_STEP_TIMEOUT must be positive, got -1m0s"},
		{"GONOGO_MAX_ARTIFACT", "0", `GONOGO_MAX_ARTIFACT="0" is not a size above zero`},
		{"GONOGO_MAX_PARALLEL", "two", `GONOGO_MAX_PARALLEL="two" is not a whole number; for example GONOGO_MAX_PARALLEL=4`},
		{"GONOGO_RUN_BUDGET_USD", "-1", "GONOGO_RUN_BUDGET_USD must be an amount of dollars"},
		{"GONOGO_LOG_LEVEL", "loud", `GONOGO_LOG_LEVEL="loud" is not a log level`},
	} {
		_, err := Load(context.Background(), envconfig.MapLookuper(map[string]string{tc.name: tc.value}))
		if err == nil || !strings.HasPrefix(err.Error(), "configuration: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%s: %v, want %q", tc.name, tc.value, err, tc.want)
		}
	}
	c, err := Load(context.Background(), envconfig.MapLookuper(map[string]string{"GONOGO_MAX_ARTIFACT": "512KiB"}))
	if err != nil || c.MaxArtifact != 512<<10 || c.DataDir != "./gonogo-data" {
		t.Fatalf("Load: %+v, %v", c, err)
	}
}

// TestResumeChangesOnlyWhatIsGiven: a resumed run keeps its recorded
// setup but for the flags given; naming another runner takes its
// executable, and any runner named takes GONOGO_RUNNER_ARGS again.
func TestResumeChangesOnlyWhatIsGiven(t *testing.T) {
	rec := &engine.Setup{Runner: "claude", RunnerCmd: "/opt/claude", RunnerArgs: []string{"--model", "opus"}, Skills: []string{"/s"}}
	r := &engine.Run{Setup: rec}
	c := Config{RunnerArgs: "--fast"}
	for _, tc := range []struct {
		o    Overrides
		want engine.Setup
	}{
		{Overrides{Runner: "codex", RunnerCmd: "codex2"}, *rec},
		{Overrides{Runner: "codex", RunnerCmd: "codex2", RunnerGiven: true},
			engine.Setup{Runner: "codex", RunnerCmd: "codex2", RunnerArgs: []string{"--fast"}, Skills: []string{"/s"}}},
		{Overrides{Runner: "claude", RunnerCmd: "other", RunnerGiven: true},
			engine.Setup{Runner: "claude", RunnerCmd: "/opt/claude", RunnerArgs: []string{"--fast"}, Skills: []string{"/s"}}},
		{Overrides{Skills: "/t", SkillsGiven: true},
			engine.Setup{Runner: "claude", RunnerCmd: "/opt/claude", RunnerArgs: []string{"--model", "opus"}, Skills: []string{"/t"}}},
	} {
		got, err := c.Resume(r, tc.o)
		if err != nil || len(engine.DiffSetup(&tc.want, &got)) > 0 {
			t.Errorf("%+v: %+v, %v; want %+v", tc.o, got, err, tc.want)
		}
	}
	if _, err := (Config{RunnerArgs: `"open`}).Resume(r, Overrides{Runner: "claude", RunnerGiven: true}); err == nil || !strings.Contains(err.Error(), "GONOGO_RUNNER_ARGS") {
		t.Errorf("unsplittable GONOGO_RUNNER_ARGS: %v", err)
	}
}

// TestCheckSetupNamesWhatIsGone: a recorded setup whose agent, skills
// folder or policy file is gone is refused, naming it and the flag that
// points at a replacement; one whose parts are all there is not.
func TestCheckSetupNamesWhatIsGone(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ok := engine.Setup{Runner: "command", RunnerCmd: agent, Skills: []string{dir}, Policy: policy}
	if err := CheckSetup("r1", ok); err != nil {
		t.Fatalf("all there: %v", err)
	}
	for _, tc := range []struct {
		change func(*engine.Setup)
		want   string
	}{
		{func(s *engine.Setup) { s.RunnerCmd = "" }, "no agent is recorded: name one with --runner-cmd PATH"},
		{func(s *engine.Setup) { s.RunnerCmd = filepath.Join(dir, "gone") }, "the agent " + filepath.Join(dir, "gone") + " that run r1 was started with is gone (no such file or directory)"},
		{func(s *engine.Setup) { s.Skills = []string{agent} }, "the skills folder " + agent + " that run r1 was started with is gone: point at a replacement with --skills DIR"},
		{func(s *engine.Setup) { s.Policy = policy + ".gone" }, "the policy file " + policy + ".gone that run r1 was started with is gone (no such file or directory)"},
		{func(s *engine.Setup) { s.Runner, s.RunnerCmd = "dry-run", "" }, ""},
	} {
		s := ok
		tc.change(&s)
		err := CheckSetup("r1", s)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", s, err, tc.want)
		}
	}
}

// TestPublicURLIsAnOrigin: GONOGO_PUBLIC_URL is refused, naming the
// variable, unless it is an absolute http or https origin; a password in
// it is never repeated.
func TestPublicURLIsAnOrigin(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"", ""},
		{"https://gonogo.example.com", ""},
		{"http://127.0.0.1:9090/", ""},
		{"gonogo.example.com", "is not an absolute http or https URL"},
		{"ftp://gonogo.example.com", "is not an absolute http or https URL"},
		{"https://", "is not an absolute http or https URL"},
		{"https://gonogo.example.com/gonogo", "has a path, query or fragment"},
		{"https://gonogo.example.com/?a=1", "has a path, query or fragment"},
		{"https://admin:hunter2@gonogo.example.com", "must not carry a user or password"},
	} {
		var s Slack
		err := Process(context.Background(), &s, envconfig.MapLookuper(map[string]string{"GONOGO_PUBLIC_URL": tc.value, "GONOGO_HTTP_ADDR": ":9090"}))
		if err == nil {
			err = s.Check()
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q refused: %v", tc.value, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "GONOGO_PUBLIC_URL") || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v, want an error naming GONOGO_PUBLIC_URL with %q", tc.value, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "hunter2"):
			t.Errorf("%q: the refusal repeats the password: %v", tc.value, err)
		}
	}
	if err := (Slack{PublicURL: "https://g.example.com"}).Check(); err == nil || !strings.Contains(err.Error(), "GONOGO_HTTP_ADDR is not") {
		t.Errorf("GONOGO_PUBLIC_URL without GONOGO_HTTP_ADDR: %v", err)
	}
	if got := (Slack{PublicURL: "https://g.example.com/"}).PublicBase(); got != "https://g.example.com" {
		t.Errorf("PublicBase = %q", got)
	}
}
