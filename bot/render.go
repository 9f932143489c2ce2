package bot

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
)

// This file turns engine values into Block Kit: the run's header, one
// message per step, the interrupted notice, the end of a run, refusals,
// help, the runs list and the modals. It is pure: no Slack call, no store,
// no clock (the time comes in View). Every function returns blocks within
// Block Kit's limits whatever the run holds; user text (artifacts, skill
// names, reasons, feedback) is escaped so it can never mention, link or
// format beyond what it says.
//
// Unexported names here and in limits.go start with "rd": the package's
// other files (translate, transport) keep their own small text functions.

// View is what a message shows beyond the run itself: facts the bot knows
// and the engine does not (the run itself carries the quorum and the votes).
// The zero View is valid.
type View struct {
	// Now is the moment of rendering: a run's elapsed time and a running
	// step's elapsed time are measured to it, and a date on another day
	// than Now shows its date. Zero: the run's last update.
	Now time.Time
	// Attempt is the attempt a step message shows; 0 means the latest. A
	// message posted for an earlier attempt is rendered with its number, so
	// after a redo it keeps showing that attempt and who asked for the redo.
	Attempt int
	// Progress is the latest live news of the running step, nil before any.
	Progress *engine.Progress
	// Preview is the shown attempt's artifact text, or its beginning; the
	// message shows its first lines.
	Preview string
	// ArtifactName is the file name the artifact is attached as; empty means
	// the name gonogo writes it under (NN-skill.md).
	ArtifactName string
	// ArtifactLink is the attached file's permalink, when known.
	ArtifactLink string
	// RemindedAt is when the approvers were last reminded of a waiting
	// step; zero when they were not.
	RemindedAt time.Time
	// Deadline is when a waiting step times out; zero for never.
	// AbortAtDeadline says the run is aborted then, rather than left waiting.
	Deadline        time.Time
	AbortAtDeadline bool
	// OfferSaveWorkflow adds "Save as workflow" to a chain's completion,
	// where named workflows are available.
	OfferSaveWorkflow bool
	// AbortedBy is who aborted a run that was aborted while no step was
	// waiting (no step decision records it); a Slack user id.
	AbortedBy string
	// Step is the step a halt notice (Halt) is about: in a workflow
	// several steps may fail at once, each with a notice of its own. 0
	// means the step the run is halted on.
	Step int
}

// onStep is v for a message about step n: a halt notice.
func (v View) onStep(n int) View {
	v.Step = n
	return v
}

// Reply is a message in a run's thread that EditFromReplyModal offers as a
// step's new artifact.
type Reply struct {
	User   string    // Slack user id of the author
	TS     string    // the reply's message ts
	Time   time.Time // when it was posted
	File   string    // the attached file's name; "" for a text reply
	FileID string    // the attached file's id; "" for a text reply
	Chars  int       // the replacement's length in characters
}

// Ref is the reply as the edit-reply modal's option value names it.
func (r Reply) Ref() ReplyRef { return ReplyRef{TS: r.TS, File: r.FileID} }

// The words a person sees for each state and decision.
var (
	rdStatusEmoji = map[engine.StepStatus]string{
		engine.StepPending: "⚪", engine.StepQueued: "🕒", engine.StepRunning: "⏳", engine.StepWaiting: "✋",
		engine.StepDone: "✅", engine.StepSkipped: "⏭", engine.StepInterrupted: "⚠️", engine.StepAborted: "🛑",
	}
	rdRunEmoji = map[engine.RunState]string{
		engine.RunRunning: "⏳", engine.RunWaiting: "✋", engine.RunCompleted: "✅", engine.RunAborted: "🛑",
	}
	rdResultEmoji = map[engine.Result]string{
		engine.ResultProduced: "🟢", engine.ResultEmpty: "🟡", engine.ResultFailed: "🔴",
		engine.ResultManual: "🖐", engine.ResultNotExecuted: "⚪",
	}
	rdDecisionWords = map[engine.DecisionKind]struct{ emoji, done, short string }{
		engine.DecideApprove: {"✅", "Approved", "approved"},
		engine.DecideEdit:    {"✏️", "Edited", "edited"},
		engine.DecideSkip:    {"⏭", "Skipped", "skipped"},
		engine.DecideRedo:    {"🔁", "Redo requested", "redo requested"},
		engine.DecideAbort:   {"🛑", "Aborted", "aborted"},
	}
	rdButtonLabels = map[engine.DecisionKind]string{
		engine.DecideApprove: "Approve", engine.DecideEdit: "Edit", engine.DecideSkip: "Skip",
		engine.DecideRedo: "Redo", engine.DecideAbort: "Abort",
	}
	rdButtonActions = map[engine.DecisionKind]string{
		engine.DecideApprove: ActionApprove, engine.DecideEdit: ActionEdit, engine.DecideSkip: ActionSkip,
		engine.DecideRedo: ActionRedo, engine.DecideAbort: ActionAbort,
	}
)

// How much of a run a message shows before it summarises.
const (
	rdChecklistMax   = 25 // header checklist lines before it shows a window
	rdTableMax       = 60 // completion table lines
	rdLeftoverMax    = 10 // manual or deferred blocks listed
	rdPreviewLines   = 15
	rdPreviewBudget  = 2600 // characters of the preview's code block
	rdRunsListMax    = 40
	rdAttemptsListed = 10
	rdDefaultCommand = "/gonogo"
)

// Header is the run's root message, updated as the run goes: input, mode,
// domain and confidence, a checklist of the steps with their state, the
// manual and deferred blocks, cost so far, elapsed time and who started it.
func Header(r *engine.Run, v View) []slack.Block {
	if r == nil {
		return rdNoRun()
	}
	title := "gonogo run"
	if k := rdPlain(string(r.Input), 40); strings.TrimSpace(k) != "" {
		title = "gonogo " + k + " run"
	}
	if r.Input == engine.InputWorkflow && engine.ValidSkillName(r.Plan.Source) {
		title += ": " + rdPlain(r.Plan.Source, 100)
	}
	body := []slack.Block{rdHeader(rdOrQ(rdRunEmoji[r.State]) + " " + title)}
	input := rdInputLine(r.Input, r.Plan.Source)
	if r.Input == engine.InputWorkflow && strings.TrimSpace(r.Plan.Source) != "" {
		input = "Workflow: `" + rdMdLine(r.Plan.Source, 300) + "`"
	}
	fields := []string{"*Input*\n" + input, "*Mode*\n" + rdModeLine(r)}
	if r.Input == engine.InputPlan {
		fields = append(fields, "*Domain*\n"+rdDomainLine(r.Plan), "*Confidence*\n"+rdConfidenceLine(r.Plan))
	}
	cost := rdMoney(r.CostUSD)
	if r.BudgetUSD > 0 {
		cost += " of a " + rdMoney(r.BudgetUSD) + " budget"
	}
	fields = append(fields,
		"*State*\n"+rdRunStateLine(r, v),
		fmt.Sprintf("*Steps*\n%d of %d done", r.StepsDone(), len(r.Steps)),
		"*Started by*\n"+rdWho(r.StartedBy)+" "+rdWhen(r.Created, v.Now),
		"*Elapsed*\n"+rdDuration(rdRunElapsed(r, v)),
		"*Cost so far*\n"+cost,
	)
	body = append(body, rdFieldsSection(fields))
	if ctx := strings.TrimSpace(r.Plan.Context); ctx != "" {
		body = append(body, rdContextBlock("Context: "+rdMdLine(ctx, 300)))
	}
	if args := rdArgsLine(r.Plan.Args); args != "" {
		body = append(body, rdContextBlock(args))
	}
	body = append(body, rdPackSections("*Steps*", rdChecklist(r), 5, func(n int) string {
		return fmt.Sprintf("… and %d more lines", n)
	})...)
	body = append(body, rdLeftovers(r.Plan)...)
	if w := rdWarnings(r.Plan.Warnings); w != nil {
		body = append(body, w)
	}
	body = append(body, rdContextBlock("Run `"+rdMdLine(string(r.ID), 100)+"`"))
	return rdFit(body, nil, rdMaxMessageBlocks)
}

// StepMessage is one step's message in the run's thread: `Step i of N:
// skill (effort)`, then while it runs the live progress and a Cancel button;
// once it finished the result, a one-line summary, a preview of the
// artifact and where it is attached; at a checkpoint the buttons
// engine.Allowed offers (only Redo and Abort after a FAILED or interrupted
// step); after a decision, who decided what and when instead of buttons.
func StepMessage(r *engine.Run, n int, v View) []slack.Block {
	s := rdStepOf(r, n)
	if s == nil {
		return rdNoStep(r, n)
	}
	now := rdNowOf(r, v)
	a, latest := rdShownAttempt(s, v.Attempt)
	title := "*" + rdStepTitle(r, s) + "*" + rdEffortPart(s.Effort)
	if a != nil && a.N > 1 {
		title += fmt.Sprintf(" · attempt %d", a.N)
	}
	if a != nil {
		title += rdFallbackPart(s, a)
	}
	body := []slack.Block{rdSection(title)}
	var tail []slack.Block
	if line := rdParentLine(r, s); line != "" {
		body = append(body, rdContextBlock(line))
	}
	if a != nil && a.Feedback != "" {
		body = append(body, rdContextBlock("🔁 Started with the reviewer's feedback: “"+rdMdLine(a.Feedback, 600)+"”"))
	}
	running := latest && s.Status == engine.StepRunning && a != nil && a.Result == ""
	switch {
	case a == nil:
		body = append(body, rdSection(rdNoAttemptLine(s)))
	case running:
		body = append(body, rdSection(rdProgressLine(a, v, now)))
		tail = append(tail, slack.NewActionBlock("", rdCancelButton(StepRef{Run: r.ID, Step: s.N, Attempt: a.N})))
	case latest && s.Status == engine.StepInterrupted:
		body = append(body, rdSection("⚠️ *interrupted*: gonogo stopped while this step was running. Redo it, or abort the run."))
	case a.Result == "":
		body = append(body, rdSection("🛑 Stopped: the run was aborted while this step was running."))
	default:
		body = append(body, rdResultBlocks(r, s, a, v)...)
	}
	if latest && len(s.Attempts) > 1 {
		if line := rdEarlierAttempts(s, a.N, now); line != "" {
			body = append(body, rdContextBlock(line))
		}
	}
	if note := rdAddedNote(r, s, v); note != "" && latest {
		tail = append(tail, rdContextBlock(note))
	}
	decided := rdDecisionLines(r, s, a, latest, now)
	if len(decided) > 0 {
		tail = append(tail, rdSection(strings.Join(decided, "\n")))
	}
	switch {
	case !latest:
		tail = append(tail, rdContextBlock(fmt.Sprintf("A newer attempt (%d) of this step follows in the thread.", s.Latest().N)))
	case r.Finished() && !s.Settled() && !slices.ContainsFunc(rdDecisionsOn(s, a), func(d engine.Decision) bool { return d.Kind == engine.DecideAbort }):
		tail = append(tail, rdSection(rdAbortLine(r, v, now)))
	case s.Status == engine.StepWaiting || s.Status == engine.StepInterrupted:
		if s.Status == engine.StepWaiting {
			tail = append(tail, rdWaitingNotes(r, s, v, now)...)
		}
		if act := rdDecisionButtons(r, s); act != nil {
			tail = append(tail, act)
		}
	case s.Status == engine.StepQueued && a != nil && engine.AttemptSkill(s, nil) != engine.AttemptSkill(s, a):
		tail = append(tail, rdContextBlock("🕒 The fallback skill `"+rdMdLine(engine.AttemptSkill(s, nil), 120)+
			"` runs next: its attempt starts when a runner slot is free."))
	case s.Status == engine.StepQueued && a != nil:
		tail = append(tail, rdContextBlock("🕒 A new attempt is queued: it starts when a runner slot is free."))
	case s.Status == engine.StepSkipped && rdOptionalFailed(s):
		tail = append(tail, rdContextBlock("⏭ "+rdOptionalFailedWords(s)+": the run goes on without it."))
	case s.Status == engine.StepDone && len(decided) == 0 && a != nil && a.Result != "":
		tail = append(tail, rdContextBlock("⏩ Advanced automatically (guarded auto)."))
	}
	return rdFit(body, tail, rdMaxMessageBlocks)
}

// Interrupted announces, in the run's thread, a step that was running when
// gonogo stopped; it offers Redo and Abort while the step still waits for
// one of them.
func Interrupted(r *engine.Run, n int, v View) []slack.Block {
	s := rdStepOf(r, n)
	if s == nil {
		return rdNoStep(r, n)
	}
	now := rdNowOf(r, v)
	body := []slack.Block{rdSection("⚠️ *" + rdStepTitle(r, s) + "*" + rdEffortPart(s.Effort) +
		" was *interrupted*: gonogo stopped while it was running.")}
	var facts []string
	a, latest := rdShownAttempt(s, v.Attempt)
	if a != nil {
		f := fmt.Sprintf("Attempt %d", a.N)
		if !a.Started.IsZero() {
			f += " started " + rdWhen(a.Started, now)
		}
		facts = append(facts, f+".")
	}
	facts = append(facts, "*Redo* runs it again from the start; *Abort* ends the run and keeps everything produced so far.")
	body = append(body, rdContextBlock(strings.Join(facts, " ")))
	var tail []slack.Block
	if latest && s.Status == engine.StepInterrupted && !r.Finished() {
		if act := rdDecisionButtons(r, s); act != nil {
			tail = append(tail, act)
		}
	} else {
		tail = append(tail, rdContextBlock("This step has moved on: it is "+rdMdLine(string(s.Status), 40)+" now."))
	}
	return rdFit(body, tail, rdMaxMessageBlocks)
}

// Completion is the end of a run that completed: `Run complete`, a table of
// the steps with their result, decision and who made it, the manual steps,
// the deferred blocks and the total cost; a chain also offers to be saved
// as a workflow. A run that did not complete gets Halt's message instead.
func Completion(r *engine.Run, v View) []slack.Block {
	if r == nil {
		return rdNoRun()
	}
	if r.State != engine.RunCompleted {
		return Halt(r, v)
	}
	now := rdNowOf(r, v)
	title := "✅ Run complete"
	if r.DryRun {
		title += " (dry run)"
	}
	body := []slack.Block{rdHeader(title), rdSection(rdEndSummary(r, v))}
	body = append(body, rdStepTable(r)...)
	body = append(body, rdLeftovers(r.Plan)...)
	body = append(body, rdContextBlock("Run `"+rdMdLine(string(r.ID), 100)+"` finished "+rdWhen(r.Updated, now)+"."))
	var tail []slack.Block
	if v.OfferSaveWorkflow && r.Input == engine.InputChain && len(r.Steps) > 0 {
		ref := StepRef{Run: r.ID, Step: len(r.Steps)}
		if l := r.Steps[len(r.Steps)-1].Latest(); l != nil {
			ref.Attempt = l.N
		}
		save := slack.NewButtonBlockElement(ActionSaveWorkflow, rdValue(ref.Value()), rdPlainText("Save as workflow"))
		tail = append(tail, slack.NewActionBlock("", save))
	}
	return rdFit(body, tail, rdMaxMessageBlocks)
}

// Halt is the end of a run that stopped short: `Run halted` with the
// reason, and the buttons engine.Allowed offers when it halted on a FAILED
// or interrupted step (Redo and Abort; with on_error: gate also Edit and
// Skip); for a run someone aborted, `Run halted: aborted` and who did it. A
// FAILED step that gonogo retries by itself is not a halt: its notice says
// when the retry comes, and still offers Redo and Abort. v.Step picks the
// step when several are halted. A completed run gets Completion's message
// instead.
func Halt(r *engine.Run, v View) []slack.Block {
	if r == nil {
		return rdNoRun()
	}
	if r.State == engine.RunCompleted {
		return Completion(r, v)
	}
	now := rdNowOf(r, v)
	s := rdHaltedStep(r)
	if st := r.Step(v.Step); st != nil && (st.Status == engine.StepWaiting || st.Status == engine.StepInterrupted) {
		s = st
	}
	if s != nil && !r.Finished() {
		if due, n, of, ok := engine.RetryDue(s); ok {
			return rdRetryNotice(r, s, due, n, of, now)
		}
	}
	var body, tail []slack.Block
	switch {
	case r.State == engine.RunAborted:
		body = append(body, rdHeader("🛑 Run halted: aborted"), rdSection(rdAbortLine(r, v, now)+" Everything produced so far is kept."))
	case s == nil && r.State == engine.RunRunning:
		body = append(body, rdHeader("⏳ Run not halted"), rdSection("The run is still running."))
	case s == nil:
		reason := "it is waiting for a decision"
		if r.Halt != "" {
			reason = rdMdLine(r.Halt, 1000)
		}
		body = append(body, rdHeader("🛑 Run halted"), rdSection("The run is waiting: "+reason+"."))
	case s.Status == engine.StepInterrupted || s.Latest() != nil && s.Latest().Result == engine.ResultFailed:
		what := "*interrupted*, gonogo stopped while it was running."
		if s.Status != engine.StepInterrupted {
			what = rdResultText(s.Latest())
		}
		how := "*Redo* runs the step again; *Abort* ends the run and keeps everything produced so far."
		if rdGateOnError(s) {
			how = "This step's on_error is *gate*: *Edit* writes its output, *Skip* goes on without it, *Redo* runs it again; " +
				"*Abort* ends the run and keeps everything produced so far."
		}
		body = append(body, rdHeader("🛑 Run halted"),
			rdSection("Halted at *"+rdStepTitle(r, s)+"*"+rdEffortPart(s.Effort)+": "+what),
			rdContextBlock(how))
		if act := rdDecisionButtons(r, s); act != nil {
			tail = append(tail, act)
		}
	default:
		body = append(body, rdHeader("🛑 Run halted"), rdSection("Halted at *"+rdStepTitle(r, s)+"*"+rdEffortPart(s.Effort)+": "+
			rdResultText(s.Latest())+"\nDecide with the buttons on the step's message in this thread."))
	}
	body = append(body, rdSection(rdEndSummary(r, v)))
	body = append(body, rdStepTable(r)...)
	body = append(body, rdLeftovers(r.Plan)...)
	body = append(body, rdContextBlock("Run `"+rdMdLine(string(r.ID), 100)+"`, last change "+rdWhen(r.Updated, now)+"."))
	return rdFit(body, tail, rdMaxMessageBlocks)
}

// HaltHandled is a FAILED halt notice once someone acted on it: what
// failed, and that the step has moved on; no buttons.
func HaltHandled(r *engine.Run, n, attempt int) []slack.Block {
	s := rdStepOf(r, n)
	if s == nil || attempt < 1 || attempt > len(s.Attempts) {
		return rdNoStep(r, n)
	}
	a := &s.Attempts[attempt-1]
	if slices.ContainsFunc(rdDecisionsOn(s, a), func(d engine.Decision) bool { return d.Actor == engine.RetryActor }) {
		body := []slack.Block{rdHeader("🔁 Retried"),
			rdSection("*" + rdStepTitle(r, s) + "*" + rdEffortPart(s.Effort) + fmt.Sprintf(", attempt %d: ", a.N) + rdResultText(a)),
			rdContextBlock("gonogo retried it (on_error: retry): the step is " + rdMdLine(string(s.Status), 40) + " now.")}
		return rdFit(body, nil, rdMaxMessageBlocks)
	}
	body := []slack.Block{rdHeader("🛑 Run halted"),
		rdSection("Halted at *" + rdStepTitle(r, s) + "*" + rdEffortPart(s.Effort) + fmt.Sprintf(", attempt %d: ", a.N) + rdResultText(a)),
		rdContextBlock("This halt was handled: the step is " + rdMdLine(string(s.Status), 40) + " now.")}
	return rdFit(body, nil, rdMaxMessageBlocks)
}

// Reminder nudges the approvers of a step that has been waiting for a
// decision; the buttons stay on the step's own message.
func Reminder(r *engine.Run, n int, v View) []slack.Block {
	s := rdStepOf(r, n)
	if s == nil {
		return rdNoStep(r, n)
	}
	now := rdNowOf(r, v)
	line := "⏰ *" + rdStepTitle(r, s) + "*" + rdEffortPart(s.Effort) + " is waiting for a decision"
	if a := s.Latest(); a != nil && !a.Finished.IsZero() {
		line += " since " + rdWhen(a.Finished, now)
	}
	line += ". " + rdWho(r.StartedBy) + ", approvers: decide with the buttons on the step's message."
	body := []slack.Block{rdSection(line)}
	notes := v
	notes.RemindedAt = time.Time{} // this message is the reminder
	body = append(body, rdWaitingNotes(r, s, notes, now)...)
	return rdFit(body, nil, rdMaxMessageBlocks)
}

// Refusal answers input that cannot start a run (unknown skills with the
// close names on offer, no runnable step, a binary or oversized upload, a
// malformed command): what is wrong, where, and that nothing was run.
func Refusal(ref *engine.Refusal, kind engine.InputKind) []slack.Block {
	if ref == nil {
		return []slack.Block{rdSection("🚫 *Refused*. Nothing was run.")}
	}
	line := "🚫 *Refused*"
	if ref.Reason != "" {
		line += " (" + rdMdLine(string(ref.Reason), 60) + ")"
	}
	line += ": " + rdMd(ref.Message, 2500)
	body := []slack.Block{rdSection(line)}
	var where string
	src := rdMdLine(ref.Source, 500)
	switch {
	case ref.Source == "" && ref.Line > 0:
		where = fmt.Sprintf("Line %d", ref.Line)
	case ref.Source == "":
	case kind == engine.InputChain:
		where = "Chain: `" + src + "`"
	case kind == engine.InputWorkflow:
		where = "Workflow: `" + src + "`"
	case ref.Line > 0:
		where = fmt.Sprintf("File: `%s`, line %d", src, ref.Line)
	default:
		where = "Input: `" + src + "`"
	}
	if where != "" {
		body = append(body, rdContextBlock(where))
	}
	if len(ref.Suggestions) > 0 {
		names := make([]string, 0, len(ref.Suggestions))
		for name := range ref.Suggestions {
			names = append(names, name)
		}
		sort.Strings(names)
		var lines []string
		for _, name := range names {
			offers := ref.Suggestions[name]
			if len(offers) == 0 {
				lines = append(lines, "• `"+rdMdLine(name, 100)+"`: no installed skill has a close name")
				continue
			}
			var quoted []string
			for _, o := range offers[:min(len(offers), 5)] {
				quoted = append(quoted, "`"+rdMdLine(o, 100)+"`")
			}
			lines = append(lines, "• `"+rdMdLine(name, 100)+"`: did you mean "+strings.Join(quoted, ", ")+"?")
		}
		body = append(body, rdPackSections("*Close names* (offered, never substituted)", lines, 2, func(n int) string {
			return fmt.Sprintf("… and %d more unknown names", n)
		})...)
	}
	body = append(body, rdContextBlock("Nothing was run. `"+rdDefaultCommand+" help` lists the commands."))
	return rdFit(body, nil, rdMaxMessageBlocks)
}

// InputProblem answers input a person can correct (an *InputError from
// ParseCommand, ParseMention, CheckPlanFile or CheckPlanContent: a
// malformed command, a binary, empty or oversized upload): the problem,
// the usage of the command concerned when there is one, and that nothing
// was run.
func InputProblem(e *InputError) []slack.Block {
	if e == nil {
		return []slack.Block{rdSection("🚫 Nothing was run.")}
	}
	body := []slack.Block{rdSection("🚫 " + rdMd(e.Problem, 2500))}
	if u := strings.TrimSpace(rdClean(e.Usage)); u != "" {
		u = strings.ReplaceAll(rdCut(rdEscape(u), 2500), "``", "`\u200b`")
		body = append(body, rdSection("```\n"+u+"\n```"))
	}
	body = append(body, rdContextBlock("Nothing was run. `"+rdDefaultCommand+" help` lists the commands."))
	return body
}

var rdCommandRE = regexp.MustCompile(`^/[a-z0-9_-]{1,32}$`)

// HelpBlocks is `/gonogo help` as Block Kit (Help is the same as plain
// text): chain, run, runs and help with examples, the flags, and how to
// start a run from a plan file. command is the slash command as Slack sent
// it ("/gonogo").
func HelpBlocks(command string) []slack.Block {
	if !rdCommandRE.MatchString(command) {
		command = rdDefaultCommand
	}
	c := "`" + command
	lines := []string{
		"*gonogo* runs AI-agent skills step by step in a thread and stops at each checkpoint for your team's go / no-go: *Approve*, *Edit*, *Skip*, *Redo* or *Abort*.",
		"• " + c + " chain EXPR [flags] [-- context]`: run installed skills one after another. Separate them with `,`, `-&gt;` or `then`; everything after the last name (or after `--`) is the shared context.\n   Example: " + c + " chain deliver-prd -&gt; deliver-user-stories --thread -- mobile checkout`",
		"• " + c + " run WORKFLOW [flags] [--arg k=v ...] [-- context]`: run a saved workflow.\n   Example: " + c + " run weekly-discovery -- onboarding funnel`",
		"• " + c + " runs`: the runs in this channel, their state and links.",
		"• " + c + " help`: this message.",
		"• Mention gonogo in a message with a plan file attached (Markdown or text) to run the plan's Section 7 steps in that thread; put flags in the message text.",
	}
	flags := "*Flags*: `--auto` (guarded auto: advance without pausing, but a FAILED step halts and an EMPTY step pauses), " +
		"`--force-auto` (guarded auto even where gonogo keeps a run checkpointed: chains, and Complex, Chaotic or unclassified plans), " +
		"`--dry-run` (everything but the agent: each step reports NOT EXECUTED), " +
		"`--thread` (chains: each step receives the previous step's confirmed artifact)."
	return []slack.Block{rdSection(strings.Join(lines, "\n")), rdSection(flags)}
}

// RunsList answers `/gonogo runs`: the channel's runs in the order given,
// each with its state, steps done and a link to its thread when links has
// one.
func RunsList(summaries []engine.RunSummary, links map[engine.RunID]string) []slack.Block {
	if len(summaries) == 0 {
		return []slack.Block{rdSection("No runs in this channel yet. Start one with `" + rdDefaultCommand +
			" chain EXPR` or by mentioning gonogo with a plan file; `" + rdDefaultCommand + " help` says more.")}
	}
	lines := make([]string, 0, min(len(summaries), rdRunsListMax))
	for _, s := range summaries[:min(len(summaries), rdRunsListMax)] {
		id := rdMdLine(string(s.ID), 80)
		if u := rdSafeURL(links[s.ID]); u != "" {
			id = "<" + u + "|" + strings.ReplaceAll(id, "|", "¦") + ">"
		} else {
			id = "`" + id + "`"
		}
		line := fmt.Sprintf("%s %s · %s · %s · %d of %d steps done", rdOrQ(rdRunEmoji[s.State]), id,
			rdInputLine(s.Input, s.Source), rdMdLine(string(s.State), 40), s.StepsDone, s.StepsTotal)
		if !s.Created.IsZero() {
			line += " · started " + rdWhen(s.Created, time.Time{})
		}
		lines = append(lines, line)
	}
	title := fmt.Sprintf("*Runs in this channel* (%d)", len(summaries))
	body := rdPackSections(title, lines, 10, func(n int) string { return fmt.Sprintf("… and %d more runs", n) })
	if more := len(summaries) - len(lines); more > 0 {
		body = append(body, rdContextBlock(fmt.Sprintf("%d older runs are not listed.", more)))
	}
	return rdFit(body, nil, rdMaxMessageBlocks)
}

// EditModal opens a step's artifact in a multiline input for editing.
// Slack's input holds 3,000 characters: a longer artifact gets
// EditTooLongModal instead. The private_metadata is the StepRef's value.
func EditModal(ref StepRef, skill string, artifact string) slack.ModalViewRequest {
	text := rdClean(artifact)
	if n := rdTextLen(text); n > maxModalInputText {
		return EditTooLongModal(ref, skill, n)
	}
	input := slack.NewPlainTextInputBlockElement(nil, InputArtifact).
		WithMultiline(true).WithMinLength(1).WithMaxLength(maxModalInputText).WithInitialValue(text)
	intro := "\nReplace the artifact below. Saving records your edit, and the run goes on with the new text."
	if strings.TrimSpace(text) == "" {
		// A FAILED attempt the team fixes by hand (on_error: gate) has none.
		intro = "\nThis attempt has no artifact. Write the step's output below: saving records it, and the run goes on with it."
	}
	blocks := []slack.Block{
		rdSection(rdModalStep(ref, skill) + intro),
		slack.NewInputBlock(BlockArtifact, rdPlainText("Artifact"),
			rdPlainText("Up to 3,000 characters. For a longer artifact, reply in the thread with a file and press Edit again."), input),
	}
	return rdModal(ModalEdit, fmt.Sprintf("Edit step %d", ref.Step), "Save", "Cancel", rdValue(ref.Value()), blocks)
}

// EditTooLongModal says a step's artifact (size characters) is too long for
// Slack's edit box, and how to replace it: reply in the thread with a file
// (or the text) and press Edit again. It has no submit button.
func EditTooLongModal(ref StepRef, skill string, size int) slack.ModalViewRequest {
	blocks := []slack.Block{
		rdSection(rdModalStep(ref, skill) + fmt.Sprintf("\nThe artifact is *%s characters*; Slack's edit box holds at most %s.",
			rdThousands(size), rdThousands(maxModalInputText))),
		rdSection("To replace it, reply in this run's thread with the new artifact as a file (or paste the text), " +
			"then press *Edit* on the step again: gonogo offers your reply as the new artifact."),
	}
	return rdModal("", fmt.Sprintf("Edit step %d", ref.Step), "", "OK", rdValue(ref.Value()), blocks)
}

// EditFromReplyModal offers replies found in the run's thread (most recent
// first; the first ten) as a step's new artifact: "Use @ana's reply from
// 14:05 (file plan.md, 12,345 characters) as the new artifact?". Its
// callback id is ModalEditReply and its private_metadata the StepRef's
// rdValue; the chosen reply comes back as a ReplyRef value in the BlockReply
// input, where the first reply is selected. With no reply it says how to
// give one.
func EditFromReplyModal(ref StepRef, skill string, replies ...Reply) slack.ModalViewRequest {
	title := fmt.Sprintf("Edit step %d", ref.Step)
	if len(replies) == 0 {
		return rdModal("", title, "", "OK", rdValue(ref.Value()), []slack.Block{rdSection(rdModalStep(ref, skill) +
			"\nNo reply to use yet. Reply in this run's thread with the new artifact as a file (or paste the text), then press *Edit* again.")})
	}
	replies = replies[:min(len(replies), rdMaxOptions)]
	first := replies[0]
	line := fmt.Sprintf("Use %s's reply%s (%s, %s characters) as the new artifact of %s?",
		rdWho(first.User), rdReplyTime(first.Time), rdReplyWhat(first), rdThousands(first.Chars), rdModalStep(ref, skill))
	if len(replies) > 1 {
		line += "\nOr choose another reply below."
	}
	opts := make([]*slack.OptionBlockObject, 0, len(replies))
	for _, r := range replies {
		text := rdCut(fmt.Sprintf("%s: %s, %s characters", rdWho(r.User), rdReplyWhat(r), rdThousands(r.Chars)), rdMaxOptionText)
		var desc *slack.TextBlockObject
		if !r.Time.IsZero() {
			desc = rdPlainText(rdPlain("posted "+r.Time.UTC().Format("Jan 2 15:04 UTC"), rdMaxOptionText))
		}
		opts = append(opts, slack.NewOptionBlockObject(rdValue(r.Ref().Value()), rdMrkdwnText(text), desc))
	}
	radio := slack.NewRadioButtonsBlockElement(InputReply, opts...)
	radio.InitialOption = opts[0]
	blocks := []slack.Block{
		rdSection(line),
		slack.NewInputBlock(BlockReply, rdPlainText("Reply to use"), nil, radio),
		rdContextBlock("Saving records your edit, and the run goes on with the reply. The agent's original stays attached in the thread."),
	}
	return rdModal(ModalEditReply, title, "Use this reply", "Cancel", rdValue(ref.Value()), blocks)
}

func rdReplyWhat(r Reply) string {
	if r.File != "" || r.FileID != "" {
		name := r.File
		if name == "" {
			name = "attached"
		}
		return "file `" + rdMdLine(name, 60) + "`"
	}
	return "text"
}

func rdReplyTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return " from " + rdWhen(t, time.Time{})
}

// RedoModal asks for optional feedback to add to the agent's prompt before a
// step is run again.
func RedoModal(ref StepRef, skill string) slack.ModalViewRequest {
	input := slack.NewPlainTextInputBlockElement(rdPlainText("What should change?"), InputFeedback).
		WithMultiline(true).WithMaxLength(maxModalInputText)
	blocks := []slack.Block{
		rdSection("Run " + rdModalStep(ref, skill) + " again as a new attempt. Earlier attempts are kept in the thread."),
		slack.NewInputBlock(BlockFeedback, rdPlainText("Feedback for the agent (optional)"), nil, input).WithOptional(true),
	}
	return rdModal(ModalRedo, fmt.Sprintf("Redo step %d", ref.Step), "Redo", "Cancel", rdValue(ref.Value()), blocks)
}

// WorkflowProblems answers "/gonogo run" for a workflow that cannot run:
// every problem found in its file or with the arguments given, each with
// its line (file names the file), and that nothing was run.
func WorkflowProblems(name, file string, problems []engine.Problem) []slack.Block {
	head := fmt.Sprintf("🚫 *Refused* (%s): workflow `%s` cannot run: %s", engine.RefuseInvalidWorkflow,
		rdMdLine(name, 130), rdPlural(len(problems), "problem"))
	if strings.TrimSpace(file) != "" {
		head += " in `" + rdMdLine(file, 200) + "`"
	}
	lines := make([]string, 0, len(problems))
	for _, p := range problems {
		line := "• "
		if p.Line > 0 {
			line += fmt.Sprintf("line %d: ", p.Line)
		}
		lines = append(lines, line+rdMdLine(p.Message, 600))
	}
	body := []slack.Block{rdSection(head + ".")}
	body = append(body, rdPackSections("", lines, 10, func(n int) string { return fmt.Sprintf("… and %d more problems", n) })...)
	body = append(body, rdContextBlock("Nothing was run. `gonogo check --workflow "+rdMdLine(name, 130)+"` lists the same problems."))
	return rdFit(body, nil, rdMaxMessageBlocks)
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
		msg += fmt.Sprintf(". The %s: `%s`", rdPlural(len(available), "workflow"), strings.Join(shown, "`, `"))
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

// SaveWorkflowModal asks for the name a completed chain is saved under as a
// workflow, with name (made of its skills) filled in. Its callback id is
// ModalSaveWorkflow and its private_metadata the StepRef's value; the name
// comes back in the BlockWorkflowName input, where a name that cannot be
// used is shown as the field's error.
func SaveWorkflowModal(ref StepRef, name string, skills []string, thread bool) slack.ModalViewRequest {
	quoted := make([]string, 0, min(len(skills), 20))
	for _, sk := range skills[:min(len(skills), 20)] {
		quoted = append(quoted, "`"+rdMdLine(sk, 100)+"`")
	}
	chain := strings.Join(quoted, " → ")
	if more := len(skills) - len(quoted); more > 0 {
		chain += fmt.Sprintf(" → … %d more", more)
	}
	if thread {
		chain += " (threaded: each step gets the previous step's output)"
	}
	input := slack.NewPlainTextInputBlockElement(nil, InputWorkflowName).
		WithMinLength(1).WithMaxLength(MaxWorkflowName).WithInitialValue(rdPlain(name, MaxWorkflowName))
	blocks := []slack.Block{
		rdSection("Save this run's chain as a workflow the team can run by name:\n" + chain),
		slack.NewInputBlock(BlockWorkflowName, rdPlainText("Workflow name"),
			rdPlainText(fmt.Sprintf("Lower-case letters, digits and dashes, at most %d. Run it later with %s run NAME -- CONTEXT.",
				MaxWorkflowName, rdDefaultCommand)), input),
		rdContextBlock("The chain's context is not saved: give one each time the workflow runs."),
	}
	return rdModal(ModalSaveWorkflow, "Save as workflow", "Save", "Cancel", rdValue(ref.Value()), blocks)
}

// FallbackText is the plain notification text for a message rendered here
// (chat.postMessage's text): its first two texts on one line. Header text,
// which is plain_text in the blocks, is escaped for it.
func FallbackText(blocks []slack.Block) string {
	var parts []string
	for _, b := range blocks {
		if len(parts) == 2 {
			break
		}
		switch x := b.(type) {
		case *slack.HeaderBlock:
			if x.Text != nil {
				parts = append(parts, rdEscape(x.Text.Text))
			}
		case *slack.SectionBlock:
			if x.Text != nil {
				parts = append(parts, x.Text.Text)
			} else if len(x.Fields) > 0 && x.Fields[0] != nil {
				parts = append(parts, x.Fields[0].Text)
			}
		}
	}
	if len(parts) == 0 {
		return "gonogo"
	}
	return rdCut(rdOneLine(strings.Join(parts, " — "), 8000), 300)
}

// ---- pieces of messages ----

// rdStepName is how a note names a step: its workflow id, else its skill.
func rdStepName(s *engine.Step) string {
	if s.ID != "" {
		return s.ID
	}
	return s.Skill
}

// rdFallbackPart names the fallback skill an attempt ran instead of the
// step's own.
func rdFallbackPart(s *engine.Step, a *engine.Attempt) string {
	if sk := engine.AttemptSkill(s, a); sk != s.Skill {
		return " · ran the fallback `" + rdMdLine(sk, 120) + "`"
	}
	return ""
}

// rdParentLine places a step that another step's output added under it.
func rdParentLine(r *engine.Run, s *engine.Step) string {
	p := r.Step(s.Parent)
	if p == nil || s.Parent >= s.N {
		return ""
	}
	what := "from the workflow it routed the run to"
	if p.Rules.Decompose != "" {
		what = "one of the tasks it split its work into"
	}
	return fmt.Sprintf("↳ Sub-step of step %d `%s`: %s.", p.N, rdMdLine(rdStepName(p), 120), what)
}

// rdAddedNote says what a route or decompose step's output added to the
// run, once it has: "Step 2 `triage` routed the run to workflow `bugfix`:
// 3 steps added (steps 5 to 7)". A route step's output (the preview) names
// the workflow.
func rdAddedNote(r *engine.Run, s *engine.Step, v View) string {
	var added []rdNode
	for i := range r.Steps {
		if r.Steps[i].Parent == s.N && s.N < r.Steps[i].N {
			added = append(added, rdNode{s: &r.Steps[i]})
		}
	}
	if len(added) == 0 {
		return ""
	}
	who := fmt.Sprintf("Step %d `%s`", s.N, rdMdLine(rdStepName(s), 120))
	if s.Rules.Decompose != "" {
		return fmt.Sprintf("➕ %s split its work into %s, each run with `%s` (%s, listed in the header).",
			who, rdPlural(len(added), "task"), rdMdLine(s.Rules.Decompose, 120), rdNodeSpan(added))
	}
	to := "another workflow"
	if name, err := engine.RouteTarget([]byte(v.Preview)); err == nil {
		to = "workflow `" + rdMdLine(name, 120) + "`"
	}
	return fmt.Sprintf("➕ %s routed the run to %s: %s added (%s).", who, to, rdPlural(len(added), "step"), rdNodeSpan(added))
}

// rdOptionalFailed reports an optional step whose failure the run went on
// without: skipped, its latest attempt FAILED, and no one skipped it.
func rdOptionalFailed(s *engine.Step) bool {
	l := s.Latest()
	if s.Status != engine.StepSkipped || !s.Rules.Optional || l == nil || l.Result != engine.ResultFailed {
		return false
	}
	return !slices.ContainsFunc(rdDecisionsOn(s, l), func(d engine.Decision) bool { return d.Kind == engine.DecideSkip })
}

func rdOptionalFailedWords(s *engine.Step) string {
	reason := "no reason given"
	if l := s.Latest(); l != nil && strings.TrimSpace(l.Reason) != "" {
		reason = rdMdLine(l.Reason, 600)
	}
	return "skipped (optional step failed: " + reason + ")"
}

// rdGateOnError reports a FAILED step whose on_error is gate: the team may
// fix it (edit, skip, redo) besides aborting.
func rdGateOnError(s *engine.Step) bool {
	l := s.Latest()
	return s.Status == engine.StepWaiting && l != nil && l.Result == engine.ResultFailed && s.Rules.OnError.Kind == engine.OnErrorGate
}

// rdRetryLine says when gonogo retries a FAILED step by itself.
func rdRetryLine(s *engine.Step, now time.Time) string {
	due, n, of, ok := engine.RetryDue(s)
	if !ok {
		return ""
	}
	return fmt.Sprintf("🔁 Retrying at %s (retry %d of %d). *Redo* runs it now; *Abort* ends the run.", rdClock(due, now), n, of)
}

// rdRetryNotice is a FAILED step's notice while gonogo waits to retry it.
func rdRetryNotice(r *engine.Run, s *engine.Step, due time.Time, n, of int, now time.Time) []slack.Block {
	body := []slack.Block{rdHeader(fmt.Sprintf("🔁 Step %d failed: retrying", s.N)),
		rdSection("*" + rdStepTitle(r, s) + "*" + rdEffortPart(s.Effort) + ": " + rdResultText(s.Latest())),
		rdContextBlock(fmt.Sprintf("gonogo runs it again at %s (retry %d of %d, on_error: retry). *Redo* runs it now; "+
			"*Abort* ends the run and keeps everything produced so far.", rdClock(due, now), n, of))}
	var tail []slack.Block
	if act := rdDecisionButtons(r, s); act != nil {
		tail = append(tail, act)
	}
	return rdFit(body, tail, rdMaxMessageBlocks)
}

// rdClock is a moment to the second, in each reader's time zone, with its
// date when it is not on now's day.
func rdClock(t, now time.Time) string {
	u := t.UTC()
	format, fallback := "{time_secs}", u.Format("15:04:05 UTC")
	if now.IsZero() || !rdSameDay(u, now.UTC()) {
		format, fallback = "{date_short} {time_secs}", u.Format("Jan 2, 2006 15:04:05 UTC")
	}
	return fmt.Sprintf("<!date^%d^%s|%s>", t.Unix(), format, fallback)
}

// rdArgsLine lists a workflow's argument values, by name.
func rdArgsLine(args map[string]string) string {
	if len(args) == 0 {
		return ""
	}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, 0, min(len(names), 10))
	for _, k := range names[:min(len(names), 10)] {
		parts = append(parts, "`"+rdMdLine(k, 60)+"` = "+rdMdLine(args[k], 200))
	}
	if more := len(names) - len(parts); more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return "Arguments: " + strings.Join(parts, ", ")
}

func rdNoRun() []slack.Block { return []slack.Block{rdSection("There is no run to show.")} }

func rdNoStep(r *engine.Run, n int) []slack.Block {
	if r == nil {
		return rdNoRun()
	}
	return []slack.Block{rdSection(fmt.Sprintf("Run `%s` has no step %d.", rdMdLine(string(r.ID), 100), n))}
}

func rdStepOf(r *engine.Run, n int) *engine.Step {
	if r == nil {
		return nil
	}
	return r.Step(n)
}

// rdShownAttempt returns the attempt a step message shows and whether it is
// the step's latest.
func rdShownAttempt(s *engine.Step, n int) (*engine.Attempt, bool) {
	l := s.Latest()
	if n > 0 {
		for i := range s.Attempts {
			if a := &s.Attempts[i]; a.N == n {
				return a, a == l
			}
		}
	}
	return l, true
}

func rdDecisionsOn(s *engine.Step, a *engine.Attempt) []engine.Decision {
	n := 0
	if a != nil {
		n = a.N
	}
	var out []engine.Decision
	for _, d := range s.Decisions {
		if d.Attempt == n {
			out = append(out, d)
		}
	}
	return out
}

func rdStepTitle(r *engine.Run, s *engine.Step) string {
	return fmt.Sprintf("Step %d of %d: %s", s.N, len(r.Steps), rdMdLine(s.Skill, 120))
}

func rdEffortPart(effort string) string {
	if strings.TrimSpace(effort) == "" {
		return ""
	}
	return " (" + rdMdLine(effort, 200) + ")"
}

func rdModalStep(ref StepRef, skill string) string {
	return fmt.Sprintf("*step %d: %s*", ref.Step, rdMdLine(skill, 120))
}

func rdNoAttemptLine(s *engine.Step) string {
	switch s.Status {
	case engine.StepPending:
		if len(s.DependsOn) > 0 {
			var deps []string
			for _, d := range s.DependsOn[:min(len(s.DependsOn), 10)] {
				deps = append(deps, strconv.Itoa(d))
			}
			return "⚪ Pending: starts when step " + strings.Join(deps, ", ") + " is settled."
		}
		return "⚪ Pending."
	case engine.StepQueued:
		return "🕒 Queued: waiting for a free runner slot."
	case engine.StepRunning:
		return "⏳ Starting."
	case engine.StepInterrupted:
		return "⚠️ *interrupted*: gonogo stopped while this step was starting. Redo it, or abort the run."
	case engine.StepAborted:
		return "🛑 Not run: the run was aborted."
	}
	return rdOrQ(rdStatusEmoji[s.Status]) + " " + rdMdLine(string(s.Status), 40)
}

func rdProgressLine(a *engine.Attempt, v View, now time.Time) string {
	el := now.Sub(a.Started)
	p := v.Progress
	if p != nil && p.Elapsed > 0 {
		el = p.Elapsed
	}
	parts := []string{"⏳ *Running*", rdDuration(el)}
	if p != nil {
		parts = append(parts, rdPlural(p.Turns, "turn"))
		tools := rdPlural(p.ToolCalls, "tool call")
		if p.LastTool != "" {
			tools += " (last: " + rdMdLine(p.LastTool, 60) + ")"
		}
		parts = append(parts, tools)
		if p.CostUSD > 0 {
			parts = append(parts, rdMoney(p.CostUSD))
		}
		if p.Status != "" { // the agent's own words: "Reconnecting...", a retry
			parts = append(parts, rdMdLine(p.Status, 150))
		}
	}
	return strings.Join(parts, " · ")
}

// rdResultText is an attempt's result and its reason: "FAILED - the agent
// exited with code 1".
func rdResultText(a *engine.Attempt) string {
	if a == nil || a.Result == "" {
		return "no result yet"
	}
	line := rdMdLine(string(a.Result), 40)
	reason := a.Reason
	if a.Result == engine.ResultNotExecuted {
		reason = strings.TrimPrefix(reason, "NOT EXECUTED - ")
	}
	if strings.TrimSpace(reason) != "" {
		line += " - " + rdMdLine(reason, 1000)
	}
	return line
}

func rdResultBlocks(r *engine.Run, s *engine.Step, a *engine.Attempt, v View) []slack.Block {
	text := rdOrQ(rdResultEmoji[a.Result]) + " *Result:* " + rdResultText(a)
	if a.Result == engine.ResultManual {
		text += "\nShown, never run."
	}
	if sum := strings.TrimSpace(a.Summary); sum != "" {
		text += "\n*Summary:* " + rdMdLine(sum, 600)
	}
	out := []slack.Block{rdSection(text)}
	var facts []string
	if !a.Started.IsZero() && !a.Finished.IsZero() && a.Finished.After(a.Started) {
		facts = append(facts, rdDuration(a.Finished.Sub(a.Started)))
	}
	if a.Usage.Turns > 0 {
		facts = append(facts, rdPlural(a.Usage.Turns, "turn"))
	}
	if a.CostUSD > 0 {
		facts = append(facts, rdMoney(a.CostUSD))
	}
	if len(facts) > 0 {
		out = append(out, rdContextBlock(strings.Join(facts, " · ")))
	}
	if a.Artifact {
		if p, ok := rdPreview(v.Preview); ok {
			out = append(out, rdSection(p))
		}
		name := v.ArtifactName
		if name == "" {
			name = rdArtifactName(r, s, a)
		}
		label := "`" + rdMdLine(name, 200) + "`"
		if u := rdSafeURL(v.ArtifactLink); u != "" {
			label = "<" + u + "|" + strings.ReplaceAll(rdMdLine(name, 200), "|", "¦") + ">"
		}
		note := "📎 Attached in this thread as " + label
		if a.Size > 0 {
			note += " (" + rdBytesize(a.Size) + ")"
		}
		if a.Edited {
			note += " · ✏️ edited by a person"
		}
		out = append(out, rdContextBlock(note))
	}
	return out
}

// rdArtifactName is the attached file's name: the one gonogo wrote it under,
// or the name it would have.
func rdArtifactName(r *engine.Run, s *engine.Step, a *engine.Attempt) string {
	if a.File != "" {
		return path.Base(a.File)
	}
	l := s.Latest()
	return path.Base(engine.ArtifactFile(r.ID, s.N, s.Skill, a.N, l == nil || l.N == a.N))
}

// rdPreview is the first lines of an artifact as a code block, cut to stay
// well within a section's 3,000 characters. It reads only the lines it
// shows (and counts the rest), however large the artifact.
func rdPreview(text string) (string, bool) {
	text = strings.TrimLeft(text, " \t\r\n")
	if text == "" {
		return "", false
	}
	var lines []string
	rest := text
	for len(lines) < rdPreviewLines && rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimRight(rdClean(line), " \t")
		// A fence inside the artifact would end the code block early.
		line = strings.ReplaceAll(rdCut(rdEscape(line), 240), "``", "`\u200b`")
		lines = append(lines, line)
	}
	more := 0
	if strings.TrimSpace(rest) != "" {
		more = strings.Count(strings.TrimRight(rest, " \t\r\n"), "\n") + 1
	}
	size := 0
	for i, l := range lines {
		if size+rdTextLen(l)+1 > rdPreviewBudget {
			more += len(lines) - i
			lines = lines[:i]
			break
		}
		size += rdTextLen(l) + 1
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return "", false
	}
	out := "```\n" + strings.Join(lines, "\n") + "\n```"
	if more > 0 {
		out += "\n_… " + rdPlural(more, "more line") + " in the attached file_"
	}
	return out, true
}

func rdEarlierAttempts(s *engine.Step, shown int, now time.Time) string {
	var parts []string
	for i := range s.Attempts {
		a := &s.Attempts[i]
		if a.N == shown {
			continue
		}
		p := strconv.Itoa(a.N) + " " + rdMdLine(string(a.Result), 40)
		if a.Result == "" {
			p = strconv.Itoa(a.N) + " unfinished"
		}
		p += rdFallbackPart(s, a)
		for _, d := range rdDecisionsOn(s, a) {
			w, ok := rdDecisionWords[d.Kind]
			if !ok {
				continue
			}
			if d.Actor == engine.RetryActor {
				p += " (retried automatically)"
				continue
			}
			p += " (" + w.short + " by " + rdWho(d.Actor)
			if d.Feedback != "" {
				p += ": “" + rdMdLine(d.Feedback, 120) + "”"
			}
			p += ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	rdPrefix := "Earlier attempts: "
	if len(parts) > rdAttemptsListed {
		rdPrefix = fmt.Sprintf("Earlier attempts (the last %d of %d): ", rdAttemptsListed, len(parts))
		parts = parts[len(parts)-rdAttemptsListed:]
	}
	return rdPrefix + strings.Join(parts, ", ")
}

// rdDecisionLines says who decided what on attempt a, and when. With a
// quorum, approvals are votes: while the step waits the quorum line counts
// them; once they carried it they read as one approval by all who gave one;
// votes overtaken by another decision are listed as such.
func rdDecisionLines(r *engine.Run, s *engine.Step, a *engine.Attempt, latest bool, now time.Time) []string {
	ds := rdDecisionsOn(s, a)
	var approvers []string
	var lastApprove *engine.Decision
	var others []string
	for i := range ds {
		if ds[i].Kind == engine.DecideApprove {
			approvers = append(approvers, ds[i].Actor)
			lastApprove = &ds[i]
			continue
		}
		others = append(others, rdDecisionLine(ds[i], now))
	}
	if lastApprove == nil {
		return others
	}
	carried := ds[len(ds)-1].Kind == engine.DecideApprove && (s.Status == engine.StepDone || !latest)
	switch {
	case carried:
		d := *lastApprove
		line := rdDecisionLine(d, now)
		if len(rdUniq(approvers)) > 1 {
			line = rdDecisionWords[engine.DecideApprove].emoji + " Approved by " + rdPeople(approvers) + " " + rdAt(d.Time, now)
		}
		return append([]string{line}, others...)
	case latest && s.Status == engine.StepWaiting:
		return others // the quorum line counts the votes
	}
	vote := fmt.Sprintf("👍 Approved by %s (%d of the %d approvals needed)", rdPeople(approvers), len(rdUniq(approvers)), max(r.Quorum, 1))
	return append([]string{vote}, others...)
}

func rdDecisionLine(d engine.Decision, now time.Time) string {
	w, ok := rdDecisionWords[d.Kind]
	if !ok {
		return "❔ " + rdWho(d.Actor) + " decided " + rdMdLine(string(d.Kind), 40) + " " + rdAt(d.Time, now)
	}
	if d.Kind == engine.DecideRedo && d.Actor == engine.RetryActor {
		return w.emoji + " Retried automatically (on_error: retry) " + rdAt(d.Time, now)
	}
	line := w.emoji + " " + w.done + " by " + rdWho(d.Actor) + " " + rdAt(d.Time, now)
	if d.Kind == engine.DecideRedo && strings.TrimSpace(d.Feedback) != "" {
		line += " with feedback: “" + rdMdLine(d.Feedback, 800) + "”"
	}
	return line
}

// rdAbortLine says who aborted a finished run, and where.
func rdAbortLine(r *engine.Run, v View, now time.Time) string {
	for i := range r.Steps {
		s := &r.Steps[i]
		for _, d := range s.Decisions {
			if d.Kind == engine.DecideAbort {
				return fmt.Sprintf("🛑 Run aborted by %s at step %d of %d (%s) %s.", rdWho(d.Actor), s.N, len(r.Steps),
					rdMdLine(s.Skill, 120), rdAt(d.Time, now))
			}
		}
	}
	if r.State != engine.RunAborted {
		return "🛑 The run stopped."
	}
	line := "🛑 Run aborted"
	if v.AbortedBy != "" {
		line += " by " + rdWho(v.AbortedBy)
	}
	line += " " + rdAt(r.Updated, now)
	if r.Halt != "" && v.AbortedBy == "" {
		line += ": " + rdMdLine(r.Halt, 600)
	}
	return line + "."
}

// rdWaitingNotes are what a step waiting for a decision is waiting for
// beyond the buttons: the retry gonogo makes itself and when, what a
// failed step's on_error gate offers, the quorum count, the last reminder
// and the deadline.
func rdWaitingNotes(r *engine.Run, s *engine.Step, v View, now time.Time) []slack.Block {
	var notes []string
	if line := rdRetryLine(s, now); line != "" {
		notes = append(notes, line)
	}
	if rdGateOnError(s) {
		notes = append(notes, "🚧 This step's on_error is *gate*: fix it and go on (*Edit* writes its output, *Skip* goes on without it, "+
			"*Redo* runs it again), or *Abort* the run.")
	}
	if r.Quorum > 1 {
		votes := engine.Approvals(s)
		line := fmt.Sprintf("👥 Approvals: %d of %d", len(rdUniq(votes)), r.Quorum)
		if len(votes) > 0 {
			line += " (" + rdPeople(votes) + ")"
		}
		if r.ExcludeStarter && r.StartedBy != "" {
			line += ". " + rdWho(r.StartedBy) + "'s own approval does not count"
		}
		notes = append(notes, line)
	}
	if !v.RemindedAt.IsZero() {
		notes = append(notes, "⏰ Reminded "+rdWhen(v.RemindedAt, now))
	}
	if !v.Deadline.IsZero() {
		line := "⌛ Decide by " + rdWhen(v.Deadline, now)
		if v.AbortAtDeadline {
			line += ": the run is aborted then"
		} else {
			line += ": after that the step keeps waiting"
		}
		notes = append(notes, line)
	}
	if len(notes) == 0 {
		return nil
	}
	return []slack.Block{rdContextBlock(strings.Join(notes, "\n"))}
}

// rdDecisionButtons are the buttons engine.Allowed offers for s, each
// carrying the step's latest attempt; nil when the step takes no decision.
func rdDecisionButtons(r *engine.Run, s *engine.Step) *slack.ActionBlock {
	allowed := engine.Allowed(s)
	if len(allowed) == 0 || r.Finished() {
		return nil
	}
	ref := StepRef{Run: r.ID, Step: s.N}
	if l := s.Latest(); l != nil {
		ref.Attempt = l.N
	}
	val := rdValue(ref.Value())
	var els []slack.BlockElement
	for _, k := range allowed {
		label, ok := rdButtonLabels[k]
		if !ok {
			continue
		}
		b := slack.NewButtonBlockElement(rdButtonActions[k], val, rdPlainText(label))
		switch k {
		case engine.DecideApprove:
			b.Style = slack.StylePrimary
		case engine.DecideAbort:
			b.Style = slack.StyleDanger
			b.Confirm = rdConfirm("Abort the run?",
				fmt.Sprintf("The run stops at step %d. Everything produced so far is kept.", s.N), "Abort", "Keep going")
		}
		els = append(els, b)
	}
	if len(els) == 0 {
		return nil
	}
	return slack.NewActionBlock("", els...)
}

func rdCancelButton(ref StepRef) *slack.ButtonBlockElement {
	b := slack.NewButtonBlockElement(ActionCancel, rdValue(ref.Value()), rdPlainText("Cancel"))
	b.Style = slack.StyleDanger
	b.Confirm = rdConfirm("Cancel this step?",
		"The agent is stopped and the step FAILS; then you can redo it or abort the run.", "Cancel step", "Let it run")
	return b
}

func rdConfirm(title, text, yes, no string) *slack.ConfirmationBlockObject {
	c := slack.NewConfirmationBlockObject(rdPlainText(rdPlain(title, rdMaxConfirmTitle)), rdPlainText(rdPlain(text, rdMaxConfirmText)),
		rdPlainText(rdPlain(yes, rdMaxConfirmButton)), rdPlainText(rdPlain(no, rdMaxConfirmButton)))
	c.Style = slack.StyleDanger
	return c
}

// rdChecklist is the header's list of steps, each step followed by the
// steps its output added (indented under it). Past checklistMax steps it
// counts them all, then shows a window around the first step that is not
// settled, with the steps before and after it summed up.
func rdChecklist(r *engine.Run) []string {
	nodes := rdTree(r)
	if len(nodes) <= rdChecklistMax {
		lines := make([]string, 0, len(nodes))
		for _, nd := range nodes {
			lines = append(lines, rdTreeLine(r, nd, false))
		}
		return lines
	}
	focus := len(nodes) - 1
	for i, nd := range nodes {
		if !nd.s.Settled() {
			focus = i
			break
		}
	}
	window := rdChecklistMax - 5
	lo := max(0, focus-5)
	hi := min(len(nodes), lo+window)
	lo = max(0, hi-window)
	lines := []string{fmt.Sprintf("%d steps: %s", len(nodes), rdCountStatuses(rdNodeSteps(nodes)))}
	if lo > 0 {
		lines = append(lines, "… "+rdNodeSpan(nodes[:lo])+": "+rdCountStatuses(rdNodeSteps(nodes[:lo])))
	}
	for _, nd := range nodes[lo:hi] {
		lines = append(lines, rdTreeLine(r, nd, false))
	}
	if hi < len(nodes) {
		lines = append(lines, "… "+rdNodeSpan(nodes[hi:])+": "+rdCountStatuses(rdNodeSteps(nodes[hi:])))
	}
	return lines
}

// rdNode is a step in the order the thread lists a run's steps: each step
// followed by the steps its output added (a route step's workflow, a
// decompose step's tasks), one level deeper.
type rdNode struct {
	s     *engine.Step
	depth int
}

// rdTree lists r's steps in that order. For plans and chains it is the
// steps' own order.
func rdTree(r *engine.Run) []rdNode {
	kids := map[int][]int{}
	var roots []int
	for i := range r.Steps {
		s := &r.Steps[i]
		if s.Parent > 0 && s.Parent < s.N {
			kids[s.Parent] = append(kids[s.Parent], s.N)
		} else {
			roots = append(roots, s.N)
		}
	}
	out := make([]rdNode, 0, len(r.Steps))
	// A parent comes before the steps it added (Parent < N), so the walk
	// ends; the engine bounds the nesting.
	var walk func(n, depth int)
	walk = func(n, depth int) {
		out = append(out, rdNode{s: r.Step(n), depth: depth})
		for _, k := range kids[n] {
			walk(k, depth+1)
		}
	}
	for _, n := range roots {
		walk(n, 0)
	}
	return out
}

func rdNodeSteps(nodes []rdNode) []engine.Step {
	out := make([]engine.Step, len(nodes))
	for i, nd := range nodes {
		out[i] = *nd.s
	}
	return out
}

// rdNodeSpan names a run of listed steps: "steps 1 to 37" when their
// numbers follow one another, "12 steps" otherwise.
func rdNodeSpan(nodes []rdNode) string {
	for i := 1; i < len(nodes); i++ {
		if nodes[i].s.N != nodes[i-1].s.N+1 {
			return rdPlural(len(nodes), "step")
		}
	}
	if len(nodes) == 1 {
		return fmt.Sprintf("step %d", nodes[0].s.N)
	}
	return fmt.Sprintf("steps %d to %d", nodes[0].s.N, nodes[len(nodes)-1].s.N)
}

// rdTreeLine is rdStepLine indented under the step that added it.
func rdTreeLine(r *engine.Run, nd rdNode, withFile bool) string {
	if nd.depth == 0 {
		return rdStepLine(r, nd.s, withFile)
	}
	// Em spaces: Slack keeps them where it would fold plain ones.
	return strings.Repeat("\u2003", min(nd.depth, 5)) + "↳ " + rdStepLine(r, nd.s, withFile)
}

var rdStatusOrder = []engine.StepStatus{engine.StepDone, engine.StepSkipped, engine.StepWaiting, engine.StepInterrupted,
	engine.StepRunning, engine.StepQueued, engine.StepPending, engine.StepAborted}

func rdCountStatuses(steps []engine.Step) string {
	counts := map[engine.StepStatus]int{}
	for i := range steps {
		counts[steps[i].Status]++
	}
	var parts []string
	for _, st := range rdStatusOrder {
		if n := counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
			delete(counts, st)
		}
	}
	other := 0
	for _, n := range counts {
		other += n
	}
	if other > 0 {
		parts = append(parts, fmt.Sprintf("%d other", other))
	}
	return strings.Join(parts, ", ")
}

// rdStepLine is one step in the header's checklist or the end table.
func rdStepLine(r *engine.Run, s *engine.Step, withFile bool) string {
	line := fmt.Sprintf("%s %d. %s%s: %s", rdOrQ(rdStatusEmoji[s.Status]), s.N, rdMdLine(s.Skill, 80), rdEffortPart(s.Effort), rdStepState(r, s))
	if l := s.Latest(); withFile && l != nil && l.File != "" && s.Status != engine.StepSkipped {
		line += " · `" + rdMdLine(path.Base(l.File), 150) + "`"
	}
	return line
}

// rdStepState is what became of a step, in a few words.
func rdStepState(r *engine.Run, s *engine.Step) string {
	res := ""
	if l := s.Latest(); l != nil && l.Result != "" {
		res = rdMdLine(string(l.Result), 40)
	}
	with := func(words string) string {
		if res == "" {
			return words
		}
		return res + ", " + words
	}
	d := s.LastDecision()
	byWho := func(k engine.DecisionKind) string {
		if d != nil && d.Kind == k {
			return " by " + rdWho(d.Actor)
		}
		return ""
	}
	switch s.Status {
	case engine.StepPending:
		return "pending"
	case engine.StepQueued:
		if d != nil && d.Kind == engine.DecideRedo {
			return with("redo requested" + byWho(engine.DecideRedo) + ", queued")
		}
		return "queued"
	case engine.StepRunning:
		if n := len(s.Attempts); n > 1 {
			return fmt.Sprintf("running (attempt %d)", n)
		}
		return "running"
	case engine.StepWaiting:
		if due, n, of, ok := engine.RetryDue(s); ok {
			return with(fmt.Sprintf("retrying at %s (retry %d of %d)", rdClock(due, time.Time{}), n, of))
		}
		if rdGateOnError(s) {
			return with("waiting for a fix (edit, skip or redo) or abort")
		}
		if l := s.Latest(); l != nil && l.Result == engine.ResultFailed {
			return with("waiting for redo or abort")
		}
		if q := r.Quorum; q > 1 {
			return with(fmt.Sprintf("waiting for a decision (%d of %d approvals)", len(engine.Approvals(s)), q))
		}
		return with("waiting for a decision")
	case engine.StepDone:
		switch {
		case d != nil && d.Kind == engine.DecideEdit:
			return with("edited" + byWho(engine.DecideEdit))
		case d != nil && d.Kind == engine.DecideApprove:
			if votes := rdUniq(engine.Approvals(s)); len(votes) > 1 {
				return with("approved by " + rdPeople(votes))
			}
			return with("approved" + byWho(engine.DecideApprove))
		}
		return with("advanced automatically")
	case engine.StepSkipped:
		if rdOptionalFailed(s) {
			return rdOptionalFailedWords(s)
		}
		return with("skipped" + byWho(engine.DecideSkip))
	case engine.StepInterrupted:
		return "interrupted, waiting for redo or abort"
	case engine.StepAborted:
		return with("aborted" + byWho(engine.DecideAbort))
	}
	return with(rdMdLine(string(s.Status), 40))
}

// rdStepTable is the end message's table of steps, in the header's order.
func rdStepTable(r *engine.Run) []slack.Block {
	nodes := rdTree(r)
	lines := make([]string, 0, min(len(nodes), rdTableMax+1))
	for _, nd := range nodes[:min(len(nodes), rdTableMax)] {
		lines = append(lines, rdTreeLine(r, nd, true))
	}
	if len(nodes) > rdTableMax {
		rest := nodes[rdTableMax:]
		lines = append(lines, "… "+rdNodeSpan(rest)+": "+rdCountStatuses(rdNodeSteps(rest)))
	}
	return rdPackSections("*Steps*", lines, 12, func(n int) string {
		return fmt.Sprintf("… and %d more lines", n)
	})
}

func rdEndSummary(r *engine.Run, v View) string {
	counts := map[engine.DecisionKind]int{}
	auto, optional := 0, 0
	for i := range r.Steps {
		s := &r.Steps[i]
		if rdOptionalFailed(s) {
			optional++
			continue
		}
		if d := s.LastDecision(); d != nil && s.Settled() {
			counts[d.Kind]++
		} else if s.Status == engine.StepDone {
			auto++
		}
	}
	var parts []string
	for _, k := range []engine.DecisionKind{engine.DecideApprove, engine.DecideEdit, engine.DecideSkip} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], rdDecisionWords[k].short))
		}
	}
	if auto > 0 {
		parts = append(parts, fmt.Sprintf("%d advanced automatically", auto))
	}
	if optional > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped (optional, failed)", optional))
	}
	steps := fmt.Sprintf("%d of %d steps done", r.StepsDone(), len(r.Steps))
	if len(parts) > 0 {
		steps += " (" + strings.Join(parts, ", ") + ")"
	}
	return strings.Join([]string{
		"*Input:* " + rdInputLine(r.Input, r.Plan.Source),
		"*Mode:* " + rdModeLine(r) + " · *Started by* " + rdWho(r.StartedBy) + " · *Elapsed:* " + rdDuration(rdRunElapsed(r, v)),
		"*Steps:* " + steps,
		"*Total cost:* " + rdMoney(r.CostUSD),
	}, "\n")
}

// rdHaltedStep is the step a waiting run cannot pass by itself: an
// interrupted or FAILED step first, then a FAILED step gonogo is about to
// retry, then any step waiting for a decision.
func rdHaltedStep(r *engine.Run) *engine.Step {
	var retrying, waiting *engine.Step
	for i := range r.Steps {
		s := &r.Steps[i]
		switch s.Status {
		case engine.StepInterrupted:
			return s
		case engine.StepWaiting:
			if _, _, _, ok := engine.RetryDue(s); ok {
				if retrying == nil {
					retrying = s
				}
				continue
			}
			if l := s.Latest(); l != nil && l.Result == engine.ResultFailed {
				return s
			}
			if waiting == nil {
				waiting = s
			}
		}
	}
	if retrying != nil {
		return retrying
	}
	return waiting
}

// rdLeftovers lists a plan's manual blocks (shown, never run) and its
// deferred blocks (past the first runnable ones).
func rdLeftovers(p engine.Plan) []slack.Block {
	var out []slack.Block
	if len(p.Manual) > 0 {
		out = append(out, rdBlockList(fmt.Sprintf("*Manual* (%d, SKIPPED-MANUAL: shown, never run)", len(p.Manual)), p.Manual, true))
	}
	if len(p.Deferred) > 0 {
		out = append(out, rdBlockList(fmt.Sprintf("*Deferred* (%d, past the first %d runnable blocks)", len(p.Deferred), engine.MaxPlanSteps), p.Deferred, false))
	}
	return out
}

func rdBlockList(title string, blocks []engine.Block, withReason bool) slack.Block {
	var lines []string
	for _, b := range blocks[:min(len(blocks), rdLeftoverMax)] {
		name := "-"
		if b.Skill != "" {
			name = "`" + rdMdLine(b.Skill, 80) + "`"
		}
		line := "• " + name + rdTokensEffort(b.PTokens, b.Effort)
		if withReason && b.Reason != "" {
			line += ": " + rdMdLine(b.Reason, 300)
		}
		lines = append(lines, line)
	}
	if n := len(blocks) - rdLeftoverMax; n > 0 {
		lines = append(lines, fmt.Sprintf("… and %d more", n))
	}
	return rdSection(title + "\n" + strings.Join(lines, "\n"))
}

func rdTokensEffort(tokens []string, effort string) string {
	var parts []string
	if len(tokens) > 0 {
		parts = append(parts, rdMdLine(strings.Join(tokens[:min(len(tokens), 5)], "+"), 40))
	}
	if strings.TrimSpace(effort) != "" {
		parts = append(parts, rdMdLine(effort, 150))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ": ") + ")"
}

func rdWarnings(ws []string) slack.Block {
	if len(ws) == 0 {
		return nil
	}
	var lines []string
	for _, w := range ws[:min(len(ws), 5)] {
		lines = append(lines, "⚠️ "+rdMdLine(w, 400))
	}
	if n := len(ws) - 5; n > 0 {
		lines = append(lines, fmt.Sprintf("… and %d more warnings", n))
	}
	return rdContextBlock(strings.Join(lines, "\n"))
}

func rdInputLine(kind engine.InputKind, source string) string {
	k := rdMdLine(string(kind), 40)
	if k == "" {
		k = "input"
	}
	if strings.TrimSpace(source) == "" {
		return k
	}
	return k + " `" + rdMdLine(source, 300) + "`"
}

func rdModeLine(r *engine.Run) string {
	m := rdMdLine(engine.RunModeName(r.Mode, r.DryRun), 40)
	if r.ForceAuto && !r.DryRun {
		m += " (--force-auto)"
	}
	if r.Thread {
		m += ", threaded"
	}
	return m
}

func rdDomainLine(p engine.Plan) string {
	switch {
	case p.DomainAmbiguous:
		return "ambiguous (stays checkpointed)"
	case p.Domain == "":
		return "not stated (stays checkpointed)"
	case p.DomainSource != "":
		return rdMdLine(string(p.Domain), 40) + " (" + rdMdLine(p.DomainSource, 40) + ")"
	}
	return rdMdLine(string(p.Domain), 40)
}

func rdConfidenceLine(p engine.Plan) string {
	if strings.TrimSpace(p.Confidence) == "" {
		return "not stated"
	}
	c := rdMdLine(p.Confidence, 60)
	if strings.TrimSpace(p.ConfidenceReason) != "" {
		c += " - " + rdMdLine(p.ConfidenceReason, 400)
	}
	return c
}

func rdRunStateLine(r *engine.Run, v View) string {
	steps := func(want func(*engine.Step) bool) []string {
		var out []string
		for i := range r.Steps {
			if want(&r.Steps[i]) {
				out = append(out, strconv.Itoa(r.Steps[i].N))
			}
		}
		if len(out) > 5 {
			out = append(out[:5], "…")
		}
		return out
	}
	stepWord := func(ns []string) string {
		if len(ns) == 1 {
			return "step " + ns[0]
		}
		return "steps " + strings.Join(ns, ", ")
	}
	switch r.State {
	case engine.RunRunning:
		if ns := steps(func(s *engine.Step) bool { return s.Status == engine.StepRunning }); len(ns) > 0 {
			return "running " + stepWord(ns)
		}
		return "running"
	case engine.RunWaiting:
		if s := rdHaltedStep(r); s != nil {
			if s.Status == engine.StepInterrupted {
				return "halted: step " + strconv.Itoa(s.N) + " was interrupted"
			}
			if due, n, of, ok := engine.RetryDue(s); ok {
				return fmt.Sprintf("step %d FAILED: retrying at %s (retry %d of %d)", s.N, rdClock(due, v.Now), n, of)
			}
			if l := s.Latest(); l != nil && l.Result == engine.ResultFailed {
				return "halted: step " + strconv.Itoa(s.N) + " FAILED"
			}
		}
		if ns := steps(func(s *engine.Step) bool { return s.Status == engine.StepWaiting }); len(ns) > 0 {
			return "waiting for a decision on " + stepWord(ns)
		}
		return "waiting for a decision"
	case engine.RunCompleted:
		return "complete"
	case engine.RunAborted:
		if v.AbortedBy != "" {
			return "aborted by " + rdWho(v.AbortedBy)
		}
		for i := range r.Steps {
			for _, d := range r.Steps[i].Decisions {
				if d.Kind == engine.DecideAbort {
					return "aborted by " + rdWho(d.Actor)
				}
			}
		}
		return "aborted"
	}
	return rdMdLine(string(r.State), 40)
}

// ---- formatting ----

var rdSlackUserRE = regexp.MustCompile(`^[UW][A-Z0-9]{2,30}$`)

// rdWho names a person: a Slack user id becomes a mention, anything else (a
// terminal user name) is shown as escaped text.
func rdWho(actor string) string {
	switch {
	case rdSlackUserRE.MatchString(actor):
		return "<@" + actor + ">"
	case strings.TrimSpace(actor) == "":
		return "someone"
	}
	return rdMdLine(actor, 80)
}

// rdPeople names several people once each: "<@U1>, <@U2> and <@U3>".
func rdPeople(ids []string) string {
	u := rdUniq(ids)
	names := rdMapWho(u[:min(len(u), 10)])
	if extra := len(u) - len(names); extra > 0 {
		names = append(names, fmt.Sprintf("%d more", extra))
	}
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func rdMapWho(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = rdWho(id)
	}
	return out
}

func rdUniq(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// rdWhen is a time in each reader's own time zone (Slack's date token),
// falling back to UTC. A time on another day than now shows its date.
func rdWhen(t, now time.Time) string {
	if t.IsZero() {
		return "(time unknown)"
	}
	u := t.UTC()
	format, fallback := "{time}", u.Format("15:04 UTC")
	if now.IsZero() || !rdSameDay(u, now.UTC()) {
		format, fallback = "{date_short} {time}", u.Format("Jan 2, 2006 15:04 UTC")
	}
	return fmt.Sprintf("<!date^%d^%s|%s>", t.Unix(), format, fallback)
}

func rdAt(t, now time.Time) string { return "at " + rdWhen(t, now) }

func rdSameDay(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd
}

func rdNowOf(r *engine.Run, v View) time.Time {
	if !v.Now.IsZero() {
		return v.Now
	}
	return r.Updated
}

func rdRunElapsed(r *engine.Run, v View) time.Duration {
	end := v.Now
	if r.Finished() || end.IsZero() {
		end = r.Updated
	}
	return end.Sub(r.Created)
}

// rdDuration is an elapsed time the way people read it: 42s, 3m 05s, 1h 02m.
func rdDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Round(time.Second)
	h, m, s := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	switch {
	case h >= 24:
		return fmt.Sprintf("%dd %02dh", h/24, h%24)
	case h > 0:
		return fmt.Sprintf("%dh %02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm %02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

func rdMoney(usd float64) string { return fmt.Sprintf("$%.2f", usd) }

func rdPlural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return rdThousands(n) + " " + word + "s"
}

func rdThousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func rdBytesize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func rdOrQ(emoji string) string {
	if emoji == "" {
		return "❔"
	}
	return emoji
}

// rdSafeURL returns u when it can sit inside a Slack link token, else "".
func rdSafeURL(u string) string {
	if len(u) > 1000 || !(strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) ||
		strings.ContainsAny(u, " <>|\"'`\n\r\t") || strings.ContainsFunc(u, rdUnwanted) {
		return ""
	}
	return u
}

// rdValue keeps a button value or private_metadata within its limit. A
// StepRef of a well-formed run id always fits; one that does not is left
// empty, so a click is refused as not gonogo's rather than misread.
func rdValue(s string) string {
	if rdTextLen(s) > rdMaxButtonValue {
		return ""
	}
	return s
}

// ---- blocks ----

func rdMrkdwnText(text string) *slack.TextBlockObject {
	if strings.TrimSpace(text) == "" {
		text = "-"
	}
	return &slack.TextBlockObject{Type: slack.MarkdownType, Text: text, Verbatim: true}
}

func rdPlainText(text string) *slack.TextBlockObject {
	if strings.TrimSpace(text) == "" {
		text = "-"
	}
	return slack.NewTextBlockObject(slack.PlainTextType, text, true, false)
}

func rdSection(text string) *slack.SectionBlock {
	return slack.NewSectionBlock(rdMrkdwnText(rdCut(text, rdMaxSectionText)), nil, nil)
}

func rdHeader(text string) *slack.HeaderBlock {
	return slack.NewHeaderBlock(rdPlainText(rdPlain(text, rdMaxHeaderText)))
}

func rdContextBlock(text string) *slack.ContextBlock {
	return slack.NewContextBlock("", rdMrkdwnText(rdCut(text, rdMaxContextText)))
}

func rdFieldsSection(fields []string) *slack.SectionBlock {
	objs := make([]*slack.TextBlockObject, 0, min(len(fields), rdMaxFields))
	for _, f := range fields[:min(len(fields), rdMaxFields)] {
		objs = append(objs, rdMrkdwnText(rdCut(f, rdMaxFieldText)))
	}
	return slack.NewSectionBlock(nil, objs, nil)
}

// rdPackSections puts lines into as few sections as fit Slack's 3,000
// characters each, at most max of them; the lines that do not fit are
// counted by more on the last line.
func rdPackSections(title string, lines []string, max int, more func(n int) string) []slack.Block {
	const room = 100 // kept free in every section for the "more" line
	var out []slack.Block
	cur := title
	for i, l := range lines {
		l = rdCut(l, 1000)
		sep := ""
		if cur != "" {
			sep = "\n"
		}
		if rdTextLen(cur)+len(sep)+rdTextLen(l) <= rdMaxSectionText-room {
			cur += sep + l
			continue
		}
		if len(out)+1 >= max {
			cur += sep + more(len(lines)-i)
			break
		}
		out = append(out, rdSection(cur))
		cur = l
	}
	if cur != "" {
		out = append(out, rdSection(cur))
	}
	return out
}

// rdFit keeps a message within Slack's block count: when body and tail are
// too many together, body loses blocks from its end and says how many; the
// tail (buttons, decisions) always stays.
func rdFit(body, tail []slack.Block, max int) []slack.Block {
	if len(tail) >= max {
		tail = tail[len(tail)-max+1:]
	}
	if len(body)+len(tail) > max {
		keep := max - len(tail) - 1
		dropped := len(body) - keep
		body = append(body[:keep:keep], rdContextBlock(fmt.Sprintf("… %d more blocks not shown.", dropped)))
	}
	return append(body, tail...)
}

func rdModal(callback, title, submit, closeLabel, metadata string, blocks []slack.Block) slack.ModalViewRequest {
	m := slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           rdPlainText(rdPlain(title, rdMaxModalTitle)),
		Close:           rdPlainText(rdPlain(closeLabel, rdMaxModalTitle)),
		Blocks:          slack.Blocks{BlockSet: blocks},
		PrivateMetadata: metadata,
		CallbackID:      callback,
	}
	if submit != "" {
		m.Submit = rdPlainText(rdPlain(submit, rdMaxModalTitle))
	}
	return m
}
