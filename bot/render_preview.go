package bot

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// Plan before apply: the preview of a run shows what `gonogo check` shows
// (the steps with their prompts, the manual and deferred blocks, the mode,
// the domain and confidence, the warnings). A run recorded to await Start
// shows it as its first message, with Start and Cancel, until someone
// presses one; once started, that message is the run's header as any
// run's. A check shows it once, with how to start the run instead of
// buttons. A mention with several plan files first asks which one.

// The buttons of a preview and of a choice between plan files.
const (
	ActionStart       = "gonogo_start"
	ActionCancelStart = "gonogo_cancel_start"
	ActionPickPlan    = "gonogo_pick_plan"
)

// How much of a step a preview shows.
const (
	previewPromptChars = 280
	previewStepMax     = 60
)

// headerOrPreview is a run's first message: its preview while it awaits
// Start (and once it was cancelled there, without buttons), else its
// Header.
func headerOrPreview(r *engine.Run, v View) []slack.Block {
	if r != nil && (engine.AwaitingStart(r) || cancelledAtStart(r)) {
		return StartPreview(r, v)
	}
	return Header(r, v)
}

// cancelledAtStart reports whether r ended at its preview, before
// anything of it ran.
func cancelledAtStart(r *engine.Run) bool {
	return r.State == engine.RunAborted && r.Halt == engine.CancelledBeforeStart
}

// StartPreview is the first message of a run that awaits Start: what it
// will run, who asked for it, and Start and Cancel (their value names the
// run). Once cancelled there it says by whom (v.AbortedBy, when known)
// and keeps what was proposed, without buttons.
func StartPreview(r *engine.Run, v View) []slack.Block {
	if r == nil {
		return noRun()
	}
	cancelled := cancelledAtStart(r)
	title := "📋 Preview: " + runTitle(r.Input, r.Plan.Source)
	if cancelled {
		title = "🚫 Cancelled: " + runTitle(r.Input, r.Plan.Source)
	}
	body := []slack.Block{headerBlock(title)}
	if cancelled {
		line := "Cancelled before it started"
		if v.AbortedBy != "" {
			line += " by " + who(v.AbortedBy)
		}
		body = append(body, section(line+" "+at(r.Updated, nowOf(r, v))+". Nothing ran."))
	}
	fields := previewFields(r.Plan, modeLine(r), cancelled)
	fields = append(fields, "*Asked by*\n"+who(r.StartedBy)+" "+when(r.Created, nowOf(r, v)))
	if r.BudgetUSD > 0 {
		fields = append(fields, "*Budget*\n"+money(r.BudgetUSD))
	}
	body = append(body, fieldsSection(fields))
	body = append(body, previewBody(r.Plan)...)
	id := "Run `" + mdLine(string(r.ID), 100) + "`"
	if cancelled {
		return fit(append(body, contextBlock(id+".")), nil, maxMessageBlocks)
	}
	body = append(body, contextBlock("Nothing runs until "+who(r.StartedBy)+" or an approver presses *Start*; *Cancel* drops it. "+id+"."))
	val := fitValue(runRef(r).Value())
	start := slack.NewButtonBlockElement(ActionStart, val, plainText("Start"))
	start.Style = slack.StylePrimary
	cancel := slack.NewButtonBlockElement(ActionCancelStart, val, plainText("Cancel"))
	return fit(body, []slack.Block{slack.NewActionBlock("", start, cancel)}, maxMessageBlocks)
}

// CheckPreview answers a check (`/gonogo check`, a mention that says
// check): what the plan would run, that nothing was recorded or run, and
// how to start it (how, Slack mrkdwn the caller wrote).
func CheckPreview(p engine.Plan, how string) []slack.Block {
	mode, _ := engine.ResolveMode(p)
	body := []slack.Block{headerBlock("🔍 Check: " + runTitle(p.Input, p.Source))}
	body = append(body, fieldsSection(previewFields(p, modeWords(mode, p.Flags), false)))
	body = append(body, previewBody(p)...)
	line := "Checked only: nothing was recorded or run."
	if strings.TrimSpace(how) != "" {
		line += " " + how
	}
	return fit(append(body, contextBlock(line)), nil, maxMessageBlocks)
}

// runTitle names a run by its input, as the header does.
func runTitle(kind engine.InputKind, source string) string {
	title := "gonogo run"
	if k := plain(string(kind), 40); strings.TrimSpace(k) != "" {
		title = "gonogo " + k + " run"
	}
	if kind == engine.InputWorkflow && engine.ValidSkillName(source) {
		title += ": " + plain(source, 100)
	}
	return title
}

// previewFields are the facts of a preview: the input, the mode, a
// plan's domain and confidence, how many steps run (none, once cancelled).
func previewFields(p engine.Plan, mode string, cancelled bool) []string {
	fields := inputFields(p.Input, p.Source, p, mode)
	steps := plural(len(p.Steps), "step") + " to run"
	if cancelled {
		steps = plural(len(p.Steps), "step") + ", none ran"
	}
	if n := len(p.Manual) + len(p.Deferred); n > 0 && !cancelled {
		steps += fmt.Sprintf(", %d not run", n)
	}
	return append(fields, "*Steps*\n"+steps)
}

// previewBody is the rest of a preview: the shared context and arguments,
// each step with its prompt, a workflow's parallel levels, the manual and
// deferred blocks and the warnings.
func previewBody(p engine.Plan) []slack.Block {
	var body []slack.Block
	if ctx := strings.TrimSpace(p.Context); ctx != "" {
		body = append(body, contextBlock("Context: "+mdLine(ctx, 300)))
	}
	if args := argsLine(p.Args); args != "" {
		body = append(body, contextBlock(args))
	}
	body = append(body, packSections(fmt.Sprintf("*Steps* (%d)", len(p.Steps)), previewStepLines(p), 8, func(n int) string {
		return fmt.Sprintf("… and %d more lines", n)
	})...)
	if levels := levelsLine(p); levels != "" {
		body = append(body, contextBlock(levels))
	}
	body = append(body, leftovers(p)...)
	if w := warnings(p.Warnings); w != nil {
		body = append(body, w)
	}
	return body
}

// previewStepLines are the lines of a preview's steps, the first
// previewStepMax of them and how many more there are.
func previewStepLines(p engine.Plan) []string {
	lines := make([]string, 0, min(len(p.Steps), previewStepMax))
	for i, s := range p.Steps[:min(len(p.Steps), previewStepMax)] {
		lines = append(lines, previewStepLine(p, i+1, s))
	}
	if n := len(p.Steps) - len(lines); n > 0 {
		lines = append(lines, fmt.Sprintf("… and %s more", plural(n, "step")))
	}
	return lines
}

// levelsLine lists a workflow's levels, the steps of each of which may run
// in parallel; "" for any other input, or a workflow with none.
func levelsLine(p engine.Plan) string {
	if p.Input != engine.InputWorkflow {
		return ""
	}
	var levels []string
	for i, l := range engine.WorkflowLevels(p) {
		levels = append(levels, fmt.Sprintf("%d. %s", i+1, codeList(l)))
	}
	if len(levels) == 0 {
		return ""
	}
	return "Levels (steps on one level may run in parallel): " + strings.Join(levels, " · ")
}

// codeList lists names as code, separated by commas.
func codeList(names []string) string {
	quoted := make([]string, 0, len(names))
	for _, n := range names {
		quoted = append(quoted, "`"+mdLine(n, 80)+"`")
	}
	return strings.Join(quoted, ", ")
}

// previewStepLine is step n of a preview: its skill, P-tokens and effort,
// how it runs, what it waits for (a workflow's), and its prompt's start.
func previewStepLine(p engine.Plan, n int, s engine.PlanStep) string {
	line, effort := fmt.Sprintf("%d. `%s`", n, mdLine(s.Skill, 80)), s.Effort
	if p.Input == engine.InputWorkflow && s.ID != "" {
		line, effort = workflowStepName(n, s)
	}
	line += tokensEffort(s.PTokens, effort)
	if s.Execution == engine.ExecInlineLeaf && s.Leaf != "" {
		line += " · runs its leaf agent `" + mdLine(s.Leaf, 80) + "` inline"
	}
	if len(s.DependsOn) > 0 {
		line += " · after " + codeList(s.DependsOn)
	}
	if prompt := strings.TrimSpace(s.Prompt); prompt != "" {
		line += "\n>" + mdLine(prompt, previewPromptChars)
	}
	return line
}

// workflowStepName is how a preview names step n of a workflow: by its id
// and its skill when they differ; and its effort, unless that is its id,
// said already.
func workflowStepName(n int, s engine.PlanStep) (line, effort string) {
	line, effort = fmt.Sprintf("%d. `%s`", n, mdLine(s.Skill, 80)), s.Effort
	if s.ID != s.Skill {
		line = fmt.Sprintf("%d. `%s` (`%s`)", n, mdLine(s.ID, 80), mdLine(s.Skill, 80))
	}
	if effort == s.ID {
		effort = ""
	}
	return line, effort
}

// PlanChoice asks which of a mention's plan files to run: each file with
// its button (the mention's pick of that file), and who may pick.
func PlanChoice(m Mention, files []FileRef) []slack.Block {
	label, then := "Use this plan", "gonogo then shows what it will run, with *Start*; nothing runs before."
	switch {
	case m.Check:
		label, then = "Check this plan", "gonogo then shows what it would run; nothing runs."
	case m.Yes:
		then = "It starts at once (`--yes`)."
	}
	verb := "run"
	if m.Check {
		verb = "check"
	}
	body := []slack.Block{section(fmt.Sprintf("📎 These files attached to %s's message each have a Section 7. Which one should gonogo %s?",
		who(m.User), verb))}
	for _, f := range files {
		text := "📄 " + fileLine(f)
		b := slack.NewButtonBlockElement(ActionPickPlan, fitValue(m.Pick(f.ID).Value()), plainText(label))
		body = append(body, slack.NewSectionBlock(mrkdwnText(cut(text, maxSectionText)), nil, slack.NewAccessory(b)))
	}
	body = append(body, contextBlock("Only "+who(m.User)+", who sent them, can pick. "+then))
	return fit(body, nil, maxMessageBlocks)
}

// PlanPicked replaces a choice between plan files once user picked one.
func PlanPicked(user string, f FileRef) []slack.Block {
	return []slack.Block{section("📄 " + who(user) + " picked " + fileLine(f) + ".")}
}

// fileLine names a file and its size.
func fileLine(f FileRef) string {
	line := "`" + mdLine(firstNonEmpty(f.Name, f.Title, f.ID), 150) + "`"
	if f.Size > 0 {
		line += " (" + sizeText(f.Size) + ")"
	}
	return line
}
