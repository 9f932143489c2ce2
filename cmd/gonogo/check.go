package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/runner"
	"github.com/gonogo/gonogo/internal/terminal"
)

func newCheckCmd(a *cli) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "check [flags] PLAN.md | --chain 'EXPR' | --workflow NAME",
		Short: "Show what would run, or why it is refused; runs nothing",
		Long: `Check a plan, a chain or a workflow as gonogo run would, and print the steps that
would run, the manual and deferred ones, or why the input is refused. Nothing runs.

Exit codes: 0 accepted, 1 refused, 2 usage, I/O or configuration error.`,
		RunE: a.action(f, cmdCheck),
	}
	a.addJSONFlag(c, f)
	// check opens no store, but --data is one of the flags DESIGN.md gives
	// run, check and resume alike, and scripts pass them to all three: it
	// is taken, and check says on stderr that it reads no store.
	a.addDataFlag(c, f)
	a.addModeFlags(c, f)
	a.addThreadFlag(c, f)
	a.addDryRunFlag(c, f, dryRunUsage)
	a.addSkillsFlag(c, f)
	a.addRunnerFlags(c, f)
	a.addInputFlags(c, f)
	return c
}

func cmdCheck(ctx context.Context, e env, cfg config, f *runFlags) int {
	if f.changed != nil && f.changed("data") {
		fmt.Fprintln(e.stderr, "note: gonogo check opens no store; --data changes nothing here")
	}
	// run refuses a runner it does not know; check says so the same way.
	if _, ok := runner.Lookup(runnerName(f)); !ok && f.runnerOverride == nil {
		fmt.Fprintf(e.stderr, "gonogo check: unknown runner %q (valid: %s)\n", runnerName(f), strings.Join(runner.Names(), ", "))
		return terminal.ExitUsage
	}
	in, err := loadInput(e, f, cfg)
	ref, refused := refusal(err)
	if err != nil && !refused {
		fmt.Fprintln(e.stderr, "gonogo check:", err)
		return terminal.ExitUsage
	}
	// A missing agent does not make the input wrong: check warns, run
	// refuses.
	if err := agentMissing(f); err != nil {
		in.plan.Warnings = append(in.plan.Warnings, err.Error())
		if ref != nil && !f.json {
			fmt.Fprintf(e.stderr, "warning: %v\n", err)
		}
	}
	if f.json {
		out := checkJSON(in, ref)
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintln(e.stderr, "gonogo check:", err)
			return terminal.ExitUsage
		}
	} else {
		printCheck(terminal.Printable(e.stdout), in, ref)
	}
	if refused {
		return terminal.ExitRefused
	}
	return terminal.ExitOK
}

type jsonCheck struct {
	Input            string          `json:"input"`
	Accepted         bool            `json:"accepted"`
	Refusal          *jsonRefusal    `json:"refusal"`
	Domain           *string         `json:"domain"`
	DomainSource     *string         `json:"domain_source"`
	DomainAmbiguous  bool            `json:"domain_ambiguous"`
	Confidence       *string         `json:"confidence"`
	ConfidenceReason *string         `json:"confidence_reason"`
	RunMode          string          `json:"run_mode"`
	Flags            jsonFlags       `json:"flags"`
	Context          *string         `json:"context"`
	Steps            []jsonCheckStep `json:"steps"`
	Manual           []jsonBlock     `json:"manual"`
	Deferred         []jsonBlock     `json:"deferred"`
	Warnings         []string        `json:"warnings"`
	Levels           [][]string      `json:"levels,omitempty"` // workflows: steps (by id) that may run in parallel, level by level
}

type jsonRefusal struct {
	Reason      string              `json:"reason"`
	Message     string              `json:"message"`
	Source      string              `json:"source,omitempty"`
	Line        int                 `json:"line,omitempty"`
	Suggestions map[string][]string `json:"suggestions"`
}

type jsonFlags struct {
	Auto      bool `json:"auto"`
	ForceAuto bool `json:"force_auto"`
	DryRun    bool `json:"dry_run"`
	Thread    bool `json:"thread"`
}

type jsonCheckStep struct {
	N         int      `json:"n"`
	Skill     string   `json:"skill"`
	Effort    string   `json:"effort"`
	PTokens   []string `json:"p_tokens"`
	Prompt    string   `json:"prompt"`
	Category  string   `json:"category"`
	Execution string   `json:"execution"`
	Line      int      `json:"line,omitempty"`
}

type jsonBlock struct {
	Effort  string   `json:"effort"`
	PTokens []string `json:"p_tokens"`
	Skill   *string  `json:"skill"`
	Prompt  string   `json:"prompt"`
	Reason  string   `json:"reason,omitempty"`
	Line    int      `json:"line,omitempty"`
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func checkJSON(in input, ref *engine.Refusal) jsonCheck {
	p := in.plan
	if p.Input == "" {
		p.Input = in.kind
	}
	// The plan carries every flag given (the intake merged them), also
	// when it was refused.
	flags := p.Flags
	mode, _ := engine.ResolveMode(p)
	out := jsonCheck{
		Input: string(p.Input), Accepted: ref == nil,
		Domain: strOrNil(string(p.Domain)), DomainSource: strOrNil(p.DomainSource), DomainAmbiguous: p.DomainAmbiguous,
		Confidence: strOrNil(p.Confidence), ConfidenceReason: strOrNil(p.ConfidenceReason),
		RunMode: engine.RunModeName(mode, flags.DryRun),
		Flags:   jsonFlags{Auto: flags.Auto, ForceAuto: flags.ForceAuto, DryRun: flags.DryRun, Thread: flags.Thread},
		Context: strOrNil(p.Context), Steps: []jsonCheckStep{}, Manual: []jsonBlock{}, Deferred: []jsonBlock{},
		Warnings: nonNil(p.Warnings),
	}
	if ref != nil {
		sug := ref.Suggestions
		if sug == nil {
			sug = map[string][]string{}
		}
		out.Refusal = &jsonRefusal{Reason: string(ref.Reason), Message: ref.Message, Source: ref.Source, Line: ref.Line, Suggestions: sug}
	}
	if ref == nil {
		for i, s := range p.Steps {
			out.Steps = append(out.Steps, jsonCheckStep{N: i + 1, Skill: s.Skill, Effort: s.Effort, PTokens: nonNil(s.PTokens),
				Prompt: s.Prompt, Category: string(s.Category), Execution: string(s.Execution), Line: s.Line})
		}
		for _, b := range p.Manual {
			out.Manual = append(out.Manual, blockJSON(b))
		}
		for _, b := range p.Deferred {
			out.Deferred = append(out.Deferred, blockJSON(b))
		}
		if p.Input == engine.InputWorkflow {
			out.Levels = engine.WorkflowLevels(p)
		}
	}
	return out
}

func blockJSON(b engine.Block) jsonBlock {
	return jsonBlock{Effort: b.Effort, PTokens: nonNil(b.PTokens), Skill: strOrNil(b.Skill), Prompt: b.Prompt, Reason: b.Reason, Line: b.Line}
}

// printCheck prints the run a check would make, for a person.
func printCheck(w io.Writer, in input, ref *engine.Refusal) {
	p := in.plan
	if ref != nil {
		printRefusal(w, in.kind, ref)
		return
	}
	mode, _ := engine.ResolveMode(p)
	printHeader(w, p, "", engine.RunModeName(mode, p.Flags.DryRun))
	fmt.Fprintf(w, "\nSteps (%d):\n", len(p.Steps))
	for i, s := range p.Steps {
		fmt.Fprintf(w, "  %d. %s%s\n", i+1, s.Skill, terminal.EffortSuffix(s.Effort, s.PTokens))
		if s.Execution == engine.ExecInlineLeaf {
			fmt.Fprintf(w, "     runs its leaf agent %s inline\n", s.Leaf)
		}
		if s.Prompt != "" {
			fmt.Fprintf(w, "     %s\n", terminal.Clip(terminal.OneLine(s.Prompt), 110))
		}
	}
	if p.Input == engine.InputWorkflow {
		fmt.Fprintln(w, "\nLevels (steps on one level may run in parallel):")
		for i, l := range engine.WorkflowLevels(p) {
			fmt.Fprintf(w, "  %d. %s\n", i+1, strings.Join(l, ", "))
		}
	}
	if len(p.Manual) > 0 {
		fmt.Fprintf(w, "\nManual, shown and never run (%d):\n", len(p.Manual))
		for _, b := range p.Manual {
			fmt.Fprintf(w, "  - %s%s: %s\n", terminal.OrDash(b.Skill), terminal.EffortSuffix(b.Effort, b.PTokens), b.Reason)
		}
	}
	if len(p.Deferred) > 0 {
		fmt.Fprintf(w, "\nDeferred, past the first %d runnable blocks (%d):\n", engine.MaxPlanSteps, len(p.Deferred))
		for _, b := range p.Deferred {
			fmt.Fprintf(w, "  - %s%s\n", b.Skill, terminal.EffortSuffix(b.Effort, b.PTokens))
		}
	}
	if len(p.Warnings) > 0 {
		fmt.Fprintln(w, "\nWarnings:")
		for _, s := range p.Warnings {
			fmt.Fprintf(w, "  ! %s\n", s)
		}
	}
}

// printRefusal says why an input was refused and where: the file and line
// of a plan, the expression of a chain.
func printRefusal(w io.Writer, kind engine.InputKind, ref *engine.Refusal) {
	if kind == engine.InputChain {
		fmt.Fprintf(w, "REFUSED (%s): %s\n  chain: %s\n", ref.Reason, ref.Message, ref.Source)
	} else {
		fmt.Fprintf(w, "REFUSED (%s): %s\n", ref.Reason, ref.Error())
	}
	fmt.Fprintln(w, "Nothing was run.")
}

// printHeader prints what a run is: its input, mode, domain and confidence.
func printHeader(w io.Writer, p engine.Plan, id engine.RunID, mode string) {
	if id != "" {
		fmt.Fprintf(w, "gonogo run %s\n", id)
	}
	fmt.Fprintf(w, "Input:      %s %s\n", p.Input, p.Source)
	fmt.Fprintf(w, "Mode:       %s\n", mode)
	if p.Input == engine.InputPlan {
		d := string(p.Domain)
		switch {
		case p.DomainAmbiguous:
			d = "ambiguous (stays checkpointed)"
		case d == "":
			d = "not stated (stays checkpointed)"
		default:
			d += " (" + p.DomainSource + ")"
		}
		fmt.Fprintf(w, "Domain:     %s\n", d)
		c := p.Confidence
		if c == "" {
			c = "not stated"
		} else if p.ConfidenceReason != "" {
			c += " - " + p.ConfidenceReason
		}
		fmt.Fprintf(w, "Confidence: %s\n", c)
	}
	if p.Context != "" {
		fmt.Fprintf(w, "Context:    %s\n", terminal.Clip(terminal.OneLine(p.Context), 110))
	}
	switch {
	case !p.Flags.Thread:
	case p.Input == engine.InputWorkflow:
		fmt.Fprintln(w, "Threaded:   a step that depends on exactly one step receives its confirmed artifact")
	default:
		fmt.Fprintln(w, "Threaded:   each step receives the previous step's confirmed artifact")
	}
}
