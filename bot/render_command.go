package bot

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// Refusal answers input that cannot start a run (unknown skills with the
// close names on offer, no runnable step, a binary or oversized upload, a
// malformed command): what is wrong, where, and that nothing was run.
func Refusal(ref *engine.Refusal, kind engine.InputKind) []slack.Block {
	if ref == nil {
		return []slack.Block{section("🚫 *Refused*. Nothing was run.")}
	}
	line := "🚫 *Refused*"
	if ref.Reason != "" {
		line += " (" + mdLine(string(ref.Reason), 60) + ")"
	}
	line += ": " + md(ref.Message, 2500)
	body := []slack.Block{section(line)}
	if where := refusalWhere(ref, kind); where != "" {
		body = append(body, contextBlock(where))
	}
	if len(ref.Suggestions) > 0 {
		body = append(body, closeNames(ref.Suggestions)...)
	}
	body = append(body, contextBlock("Nothing was run. `"+defaultCommand+" help` lists the commands."))
	return fit(body, nil, maxMessageBlocks)
}

// refusalWhere says where the refused input is wrong: the chain, the
// workflow, the file and line, or the line alone.
func refusalWhere(ref *engine.Refusal, kind engine.InputKind) string {
	src := mdLine(ref.Source, 500)
	switch {
	case ref.Source == "" && ref.Line > 0:
		return fmt.Sprintf("Line %d", ref.Line)
	case ref.Source == "":
		return ""
	case kind == engine.InputChain:
		return "Chain: `" + src + "`"
	case kind == engine.InputWorkflow:
		return "Workflow: `" + src + "`"
	case ref.Line > 0:
		return fmt.Sprintf("File: `%s`, line %d", src, ref.Line)
	}
	return "Input: `" + src + "`"
}

// closeNames lists each unknown name, in order, with the close names on
// offer (the first five), or that there are none.
func closeNames(suggestions map[string][]string) []slack.Block {
	names := make([]string, 0, len(suggestions))
	for name := range suggestions {
		names = append(names, name)
	}
	sort.Strings(names)
	lines := make([]string, 0, len(names))
	for _, name := range names {
		lines = append(lines, closeNameLine(name, suggestions[name]))
	}
	return packSections("*Close names* (offered, never substituted)", lines, 2, func(n int) string {
		return fmt.Sprintf("… and %d more unknown names", n)
	})
}

// closeNameLine is one unknown name and the close names offered for it.
func closeNameLine(name string, offers []string) string {
	if len(offers) == 0 {
		return "• `" + mdLine(name, 100) + "`: no installed skill has a close name"
	}
	var quoted []string
	for _, o := range offers[:min(len(offers), 5)] {
		quoted = append(quoted, "`"+mdLine(o, 100)+"`")
	}
	return "• `" + mdLine(name, 100) + "`: did you mean " + strings.Join(quoted, ", ") + "?"
}

// InputProblem answers input a person can correct (an *InputError from
// ParseCommand, ParseMention, CheckPlanFile or CheckPlanContent: a
// malformed command, a binary, empty or oversized upload): the problem,
// the usage of the command concerned when there is one, and that nothing
// was run.
func InputProblem(e *InputError) []slack.Block {
	if e == nil {
		return []slack.Block{section("🚫 Nothing was run.")}
	}
	body := []slack.Block{section("🚫 " + md(e.Problem, 2500))}
	if u := strings.TrimSpace(clean(e.Usage)); u != "" {
		u = strings.ReplaceAll(cut(escape(u), 2500), "``", "`\u200b`")
		body = append(body, section("```\n"+u+"\n```"))
	}
	body = append(body, contextBlock("Nothing was run. `"+defaultCommand+" help` lists the commands."))
	return body
}

var commandRE = regexp.MustCompile(`^/[a-z0-9_-]{1,32}$`)

// HelpBlocks is `/gonogo help` as Block Kit (Help is the same as plain
// text): chain, run, check, runs, stats and help with examples, the flags, and how
// to start a run from a plan file. command is the slash command as Slack sent
// it ("/gonogo").
func HelpBlocks(command string) []slack.Block {
	if !commandRE.MatchString(command) {
		command = defaultCommand
	}
	c := "`" + command
	lines := []string{
		"*gonogo* runs AI-agent skills step by step in a thread and stops at each checkpoint for your team's go / no-go: *Approve*, *Edit*, *Skip*, *Redo* or *Abort*.",
		"• " + c + " chain EXPR [flags] [-- context]`: run installed skills one after another. Separate them with `,`, `-&gt;` or `then`; everything after the last name (or after `--`) is the shared context.\n   Example: " + c + " chain deliver-prd -&gt; deliver-user-stories --thread -- mobile checkout`",
		"• " + c + " run WORKFLOW [flags] [--arg k=v ...] [-- context]`: run a saved workflow.\n   Example: " + c + " run weekly-discovery -- onboarding funnel`",
		"• " + c + " check EXPR` or " + c + " check run WORKFLOW ...`: what the chain or workflow would run (steps, prompts, mode, warnings), or why it cannot; nothing runs.",
		"• " + c + " runs`: the runs in this channel, their state and links.",
		"• " + c + " stats [--since 30d] [--skill NAME]`: per skill and agent, what the attempts did and what people decided (first-try approvals, edits, redos, the wait for a decision, the cost per approved artifact), and the same by week.",
		"• " + c + " help`: this message.",
		"• Mention gonogo in a message with a plan file attached (Markdown or text) to run the plan's Section 7 steps in that thread; put flags in the message text. " +
			"gonogo first shows what will run, with *Start*: add `--yes` to start at once, or say `check` to see it only.",
	}
	flags := "*Flags*: `--auto` (guarded auto: advance without pausing, but a FAILED step halts and an EMPTY step pauses), " +
		"`--force-auto` (guarded auto even where gonogo keeps a run checkpointed: chains, and Complex, Chaotic or unclassified plans), " +
		"`--dry-run` (everything but the agent: each step reports NOT EXECUTED), " +
		"`--thread` (chains: each step receives the previous step's confirmed artifact)."
	return []slack.Block{section(strings.Join(lines, "\n")), section(flags)}
}

// RunsList answers `/gonogo runs`: the channel's runs in the order given,
// each with its state, steps done and a link to its thread when links has
// one.
func RunsList(summaries []engine.RunSummary, links map[engine.RunID]string) []slack.Block {
	if len(summaries) == 0 {
		return []slack.Block{section("No runs in this channel yet. Start one with `" + defaultCommand +
			" chain EXPR` or by mentioning gonogo with a plan file; `" + defaultCommand + " help` says more.")}
	}
	lines := make([]string, 0, min(len(summaries), runsListMax))
	for _, s := range summaries[:min(len(summaries), runsListMax)] {
		id := mdLine(string(s.ID), 80)
		if u := safeURL(links[s.ID]); u != "" {
			id = "<" + u + "|" + strings.ReplaceAll(id, "|", "¦") + ">"
		} else {
			id = "`" + id + "`"
		}
		line := fmt.Sprintf("%s %s · %s · %s · %d of %d steps done", emojiOrQ(runEmoji[s.State]), id,
			inputLine(s.Input, s.Source), mdLine(string(s.State), 40), s.StepsDone, s.StepsTotal)
		if !s.Created.IsZero() {
			line += " · started " + when(s.Created, time.Time{})
		}
		lines = append(lines, line)
	}
	title := fmt.Sprintf("*Runs in this channel* (%d)", len(summaries))
	body := packSections(title, lines, 10, func(n int) string { return fmt.Sprintf("… and %d more runs", n) })
	if more := len(summaries) - len(lines); more > 0 {
		body = append(body, contextBlock(fmt.Sprintf("%d older runs are not listed.", more)))
	}
	return fit(body, nil, maxMessageBlocks)
}

// WorkflowProblems answers "/gonogo run" for a workflow that cannot run:
// every problem found in its file or with the arguments given, each with
// its line (file names the file), and that nothing was run.
func WorkflowProblems(name, file string, problems []engine.Problem) []slack.Block {
	head := fmt.Sprintf("🚫 *Refused* (%s): workflow `%s` cannot run: %s", engine.RefuseInvalidWorkflow,
		mdLine(name, 130), plural(len(problems), "problem"))
	if strings.TrimSpace(file) != "" {
		head += " in `" + mdLine(file, 200) + "`"
	}
	lines := make([]string, 0, len(problems))
	for _, p := range problems {
		line := "• "
		if p.Line > 0 {
			line += fmt.Sprintf("line %d: ", p.Line)
		}
		lines = append(lines, line+mdLine(p.Message, 600))
	}
	body := []slack.Block{section(head + ".")}
	body = append(body, packSections("", lines, 10, func(n int) string { return fmt.Sprintf("… and %d more problems", n) })...)
	body = append(body, contextBlock("Nothing was run. `gonogo check --workflow "+mdLine(name, 130)+"` lists the same problems."))
	return fit(body, nil, maxMessageBlocks)
}

// UnknownWorkflow answers "/gonogo run" for a name that no workflow file
// has: the close names on offer (never substituted) and the workflows
// there are.
func UnknownWorkflow(name string, suggestions, available []string) []slack.Block {
	msg := "there is no workflow `" + name + "`"
	if len(suggestions) > 0 {
		msg += " (did you mean `" + strings.Join(suggestions[:min(len(suggestions), 3)], "`, `") + "`?)"
	}
	switch {
	case len(available) == 0:
		msg += ". No workflow files are installed yet: the operator keeps them in GONOGO_WORKFLOWS_DIR."
	default:
		shown := available[:min(len(available), 30)]
		msg += fmt.Sprintf(". The %s: `%s`", plural(len(available), "workflow"), strings.Join(shown, "`, `"))
		if more := len(available) - len(shown); more > 0 {
			msg += fmt.Sprintf(" and %d more", more)
		}
		msg += "."
	}
	ref := &engine.Refusal{Reason: engine.RefuseUnknownWorkflow, Source: name, Message: msg}
	if len(suggestions) > 0 {
		ref.Suggestions = map[string][]string{name: suggestions}
	}
	return Refusal(ref, engine.InputWorkflow)
}
