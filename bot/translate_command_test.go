package bot

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

func TestParseCommand(t *testing.T) {
	chain := func(src string, names []string, f engine.Flags, ctx string) engine.ChainExpr {
		// The context is explicit when it follows a lone "--" as written.
		explicit := ctx != "" && strings.Contains(src, "-- "+ctx)
		return engine.ChainExpr{Source: src, Names: names, Flags: f, Context: ctx, ExplicitContext: explicit}
	}
	tests := []struct {
		name string
		text string
		want Command
	}{
		{"empty is help", "", Command{Kind: CmdHelp}},
		{"help", "help", Command{Kind: CmdHelp}},
		{"help in capitals, with a topic", "HELP chain", Command{Kind: CmdHelp}},
		{"--help", " --help", Command{Kind: CmdHelp}},
		{"runs", "runs", Command{Kind: CmdRuns}},
		{"runs with spaces around", "  runs \u00a0", Command{Kind: CmdRuns}},
		{"stats", "stats", Command{Kind: CmdStats, Since: "30d"}},
		{"stats with a period and a skill", "stats --since 4w --skill deliver-prd", Command{Kind: CmdStats, Since: "4w", Skill: "deliver-prd"}},
		{"stats with = and a date", "Stats --skill=deliver-prd --since=2026-03-01", Command{Kind: CmdStats, Since: "2026-03-01", Skill: "deliver-prd"}},
		{
			"chain with flag and explicit context",
			"chain deliver-prd -> deliver-user-stories --thread -- mobile checkout",
			Command{Kind: CmdChain, Flags: engine.Flags{Thread: true}, Context: "mobile checkout",
				Chain: chain("deliver-prd -> deliver-user-stories --thread -- mobile checkout",
					[]string{"deliver-prd", "deliver-user-stories"}, engine.Flags{Thread: true}, "mobile checkout")},
		},
		{
			"capitalized by a phone, entities decoded, implicit context",
			"Chain deliver-prd, deliver-user-stories --auto mobile &amp; web &lt;beta&gt;",
			Command{Kind: CmdChain, Flags: engine.Flags{Auto: true}, Context: "mobile & web <beta>",
				Chain: chain("deliver-prd, deliver-user-stories --auto mobile & web <beta>",
					[]string{"deliver-prd", "deliver-user-stories"}, engine.Flags{Auto: true}, "mobile & web <beta>")},
		},
		{
			"links and mentions in the context",
			"chain deliver-prd -- see <https://example.com/spec|the spec> and <https://example.com|example.com> with <@U0BOB|bob> in <#C0GEN|general>",
			Command{Kind: CmdChain, Context: "see the spec (https://example.com/spec) and example.com with @bob in #general",
				Chain: chain("deliver-prd -- see the spec (https://example.com/spec) and example.com with @bob in #general",
					[]string{"deliver-prd"}, engine.Flags{}, "see the spec (https://example.com/spec) and example.com with @bob in #general")},
		},
		{
			"NBSP, zero-width space and smart quotes",
			"chain\u00a0“deliver-prd”\u00a0->\u200bdeliver-user-stories",
			Command{Kind: CmdChain,
				Chain: chain("“deliver-prd”\u00a0->\u200bdeliver-user-stories",
					[]string{"deliver-prd", "deliver-user-stories"}, engine.Flags{}, "")},
		},
		{
			"a keyboard's dashes: —dry-run is the flag, a lone — is --",
			"chain deliver-prd —dry-run — ship it --auto",
			Command{Kind: CmdChain, Flags: engine.Flags{DryRun: true}, Context: "ship it --auto",
				Chain: chain("deliver-prd —dry-run -- ship it --auto",
					[]string{"deliver-prd"}, engine.Flags{DryRun: true}, "ship it --auto")},
		},
		{
			"run with flags, args and context",
			`run release-train --dry-run --arg topic="mobile checkout" --arg=owner=ana -- ship by Friday`,
			Command{Kind: CmdRun, Workflow: "release-train", Flags: engine.Flags{DryRun: true},
				Args: map[string]string{"topic": "mobile checkout", "owner": "ana"}, Context: "ship by Friday"},
		},
		{
			"run typed on a phone: smart quotes and dashes",
			"Run release-2 —auto —arg topic=“mobile checkout” — note: keep --thread as text",
			Command{Kind: CmdRun, Workflow: "release-2", Flags: engine.Flags{Auto: true},
				Args: map[string]string{"topic": "mobile checkout"}, Context: "note: keep --thread as text"},
		},
		{
			"run with an empty argument and every flag",
			"run wf --auto --force-auto --dry-run --thread --arg note=",
			Command{Kind: CmdRun, Workflow: "wf", Flags: engine.Flags{Auto: true, ForceAuto: true, DryRun: true, Thread: true},
				Args: map[string]string{"note": ""}},
		},
		{
			"check a chain",
			"check deliver-prd -> deliver-user-stories --auto",
			Command{Kind: CmdCheck, Checks: CmdChain, Flags: engine.Flags{Auto: true},
				Chain: chain("deliver-prd -> deliver-user-stories --auto", []string{"deliver-prd", "deliver-user-stories"}, engine.Flags{Auto: true}, "")},
		},
		{
			"check chain, spelled out",
			"Check chain deliver-prd",
			Command{Kind: CmdCheck, Checks: CmdChain, Chain: chain("deliver-prd", []string{"deliver-prd"}, engine.Flags{}, "")},
		},
		{
			"check a workflow",
			"check run wf --dry-run --arg k=v -- soon",
			Command{Kind: CmdCheck, Checks: CmdRun, Workflow: "wf", Flags: engine.Flags{DryRun: true}, Args: map[string]string{"k": "v"}, Context: "soon"},
		},
		{
			"run with a quoted arg pair and an apostrophe in a value",
			`run wf --arg "title=don't panic" --arg who=ana's`,
			Command{Kind: CmdRun, Workflow: "wf", Args: map[string]string{"title": "don't panic", "who": "ana's"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCommand(slashCommand(tt.text))
			if err != nil {
				t.Fatalf("ParseCommand(%q): %v", tt.text, err)
			}
			want := tt.want
			want.Slash, want.User, want.Team, want.Channel = "/gonogo", testUser, testTeam, testChannel
			want.ResponseURL, want.TriggerID = "https://hooks.slack.com/commands/T0ACME/1/x", "111.222.abc"
			want.Text = got.Text // checked by TestSlackText
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ParseCommand(%q)\n got %#v\nwant %#v", tt.text, got, want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	h := Help("/pm")
	for _, want := range []string{"/pm chain EXPR", "/pm run WORKFLOW", "/pm check EXPR", "/pm runs", "/pm stats", "/pm help", "--auto", "--dry-run", "--thread", ".md", "--yes"} {
		if !strings.Contains(h, want) {
			t.Errorf("Help lacks %q:\n%s", want, h)
		}
	}
	if got := Usage("", CmdChain); !strings.HasPrefix(got, "/gonogo chain EXPR") {
		t.Errorf("Usage(\"\", chain) = %q", got)
	}
	// A custom slash command name is used in the answer to bad input.
	sc := slashCommand("frobnicate")
	sc.Command = "/pm"
	_, err := ParseCommand(sc)
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(ie.Problem, "/pm takes chain") || !strings.Contains(ie.Usage, "/pm runs") {
		t.Errorf("unknown subcommand of /pm: %v", err)
	}
}

func TestParseCheckRefusals(t *testing.T) {
	for text, want := range map[string]string{
		"check":                 "name what to check",
		"check run":             "name the workflow",
		"check run wf --bogus":  "unknown flag",
		"check run Weekly_Disc": "did you mean",
	} {
		_, err := ParseCommand(slashCommand(text))
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(ie.Problem, want) || !strings.Contains(ie.Usage, "/gonogo check") {
			t.Errorf("ParseCommand(%q) = %v, want an input error saying %q with check's usage", text, err, want)
		}
	}
	var ref *engine.Refusal
	if _, err := ParseCommand(slashCommand("check a ->")); !errors.As(err, &ref) {
		t.Errorf("check of a chain ending in a separator: %v, want the chain's refusal", err)
	}
}

func TestParseStatsRefusals(t *testing.T) {
	for text, want := range map[string]string{
		"stats --since":               "--since needs a value",
		"stats --since 3x":            `--since "3x": give hours, days or weeks back`,
		"stats --since=last-week":     `--since "last-week"`,
		"stats --skill":               "--skill needs a value",
		"stats --skill ../etc/passwd": `--skill "../etc/passwd" is not a skill name`,
		"stats deliver-prd":           `stats takes --since and --skill (got "deliver-prd")`,
		"stats --json":                `(got "--json")`,
	} {
		_, err := ParseCommand(slashCommand(text))
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(ie.Problem, want) || !strings.Contains(ie.Usage, "/gonogo stats") {
			t.Errorf("ParseCommand(%q) = %v, want an input error saying %q with stats' usage", text, err, want)
		}
	}
}

func TestParseCommandBestOf(t *testing.T) {
	for _, tt := range []struct {
		text    string
		names   []string
		source  string // the chain as the intake reads it
		context string
		problem string
	}{
		{text: "chain a -> b --best-of claude,codex", names: []string{"claude", "codex"}, source: "a -> b"},
		{text: "chain --best-of=claude,claude a, b -- saved searches", names: []string{"claude", "claude"}, source: "a, b -- saved searches", context: "saved searches"},
		// After a lone "--" it is context as written.
		{text: "chain a -- compare --best-of claude,codex", source: "a -- compare --best-of claude,codex", context: "compare --best-of claude,codex"},
		{text: "chain a --best-of", problem: "--best-of at column 3 needs runner names"},
		{text: "chain a --best-of=, b", problem: "--best-of at column 3 needs runner names"},
		{text: "chain a --best-of claude,codex --best-of gemini,codex", problem: "--best-of is given twice"},
	} {
		cmd, err := ParseCommand(slashCommand(tt.text))
		if tt.problem != "" {
			var in *InputError
			if !errors.As(err, &in) || !strings.Contains(in.Problem, tt.problem) {
				t.Errorf("%q: error %v, want %q", tt.text, err, tt.problem)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.text, err)
			continue
		}
		if !reflect.DeepEqual(cmd.BestOf, tt.names) || strings.TrimSpace(cmd.Chain.Source) != tt.source || cmd.Context != tt.context {
			t.Errorf("%q: best-of %q, chain %q, context %q; want %q, %q, %q", tt.text, cmd.BestOf, cmd.Chain.Source, cmd.Context, tt.names, tt.source, tt.context)
		}
	}
}
