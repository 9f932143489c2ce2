package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/intake"
)

// Named workflows in Slack: "/gonogo run WORKFLOW" starts one from the
// workflows directory (Config.WorkflowsDir), and a completed chain offers
// "Save as workflow", which writes one there.

// The "Save as workflow" modal: its callback id, and the input that names
// the workflow.
const (
	ModalSaveWorkflow = "gonogo_save_workflow_modal"
	BlockWorkflowName = "gonogo_workflow_name"
	InputWorkflowName = "gonogo_workflow_name_input"
)

// runWorkflow answers "/gonogo run WORKFLOW" (and "check run WORKFLOW"):
// the workflow is read from the workflows directory and checked against
// the installed skills with the arguments, context and flags given; then
// it starts as a chain does (a new thread in the channel, the command's
// envelope as the start's key; a check shows what would run), or the
// person is told every reason it cannot.
func (b *Bot) runWorkflow(ctx context.Context, cmd Command, envelopeID string) {
	plan, opt, no, err := b.takeWorkflow(cmd, envelopeID)
	switch {
	case err != nil:
		b.refuse(ctx, cmd.Channel, "", cmd.User, engine.InputWorkflow, err, "")
	case no != nil:
		b.tell(ctx, cmd.Channel, "", cmd.User, no.text, no.blocks)
	default:
		b.startCommand(ctx, cmd, plan, opt)
	}
}

// takeWorkflow reads "/gonogo run WORKFLOW" into the plan and options of a
// run, or the answer that refuses it (every problem of the file, each with
// its line; the close names and the workflows there are). err is a failure
// that is no person's to correct, for refuse, with the server's directory
// taken out.
func (b *Bot) takeWorkflow(cmd Command, envelopeID string) (engine.Plan, engine.StartOptions, *answer, error) {
	if b.cfg.WorkflowsDir == "" {
		return engine.Plan{}, engine.StartOptions{}, &answer{text: "Named workflows are not set up here: the operator sets GONOGO_WORKFLOWS_DIR " +
			"to the directory that holds them. Nothing was run."}, nil
	}
	plan, opt, err := intake.Take(b.intakeConfig(), intake.Request{
		Input: engine.InputWorkflow, Workflow: cmd.Workflow, Args: cmd.Args, Context: cmd.Context, Flags: cmd.Flags,
		StartedBy: cmd.User, Origin: engine.Origin{Channel: cmd.Channel}, Key: "slack-command:" + envelopeID,
	})
	if err != nil {
		no, err := b.workflowRefusal(cmd.Workflow, err)
		return engine.Plan{}, engine.StartOptions{}, no, err
	}
	return plan, opt, nil, nil
}

// workflowRefusal is the answer that refuses a workflow intake could not
// take (see takeWorkflow), or the error no person can correct.
func (b *Bot) workflowRefusal(workflow string, err error) (*answer, error) {
	var ref *engine.Refusal
	var blocks []slack.Block
	switch {
	case errors.As(err, &ref) && len(ref.Problems) > 0:
		// Every problem of the file, each with its line, one by one.
		blocks = WorkflowProblems(workflow, filepath.Base(ref.Source), ref.Problems)
	case errors.As(err, &ref) && ref.Reason == engine.RefuseUnknownWorkflow:
		// The refusal's message names the directory on the server; the
		// person needs the names only.
		names, _ := intake.Dir(b.cfg.WorkflowsDir).List()
		blocks = UnknownWorkflow(workflow, ref.Suggestions[workflow], names)
	case errors.Is(err, fs.ErrNotExist):
		b.cfg.Log.Error("the workflows directory cannot be read", "dir", b.cfg.WorkflowsDir, "err", err)
		blocks = UnknownWorkflow(workflow, nil, nil)
	default:
		err = hideDir(err, b.cfg.WorkflowsDir)
		if no := refusalAnswer(err, engine.InputWorkflow); no != nil {
			return no, nil
		}
		return nil, err
	}
	return &answer{text: FallbackText(blocks), blocks: blocks}, nil
}

// saveWorkflowContent is the "Save as workflow" modal for a completed
// chain, with a free name made of its skills filled in, or why it cannot
// be saved.
func (b *Bot) saveWorkflowContent(r *engine.Run, a Action) (slack.ModalViewRequest, string) {
	if why := b.unsaveable(r); why != "" {
		return slack.ModalViewRequest{}, why
	}
	skills := chainSkills(r)
	name := workflowNameFor(skills, func(n string) bool {
		_, ok := intake.Dir(b.cfg.WorkflowsDir).Find(n)
		return ok
	})
	return SaveWorkflowModal(a.Ref, name, skills, r.Thread), ""
}

// unsaveable is why run r cannot be saved as a workflow, or "".
func (b *Bot) unsaveable(r *engine.Run) string {
	switch {
	case b.cfg.WorkflowsDir == "":
		return "Saving workflows is not set up here: the operator sets GONOGO_WORKFLOWS_DIR. Nothing was saved."
	case r.Input != engine.InputChain || r.State != engine.RunCompleted:
		return "Only a completed chain can be saved as a workflow. Nothing was saved."
	}
	return ""
}

// saveWorkflow writes a completed chain as the workflow the modal named
// and tells the person where it is and how to run it. received is when the
// submission arrived: a name found taken by a file older than that was
// already refused in the modal (see submissionErrors), so the person is
// not told twice.
func (b *Bot) saveWorkflow(ctx context.Context, r *engine.Run, sub Submission, channel, thread string, received time.Time) {
	tell := func(text string) { b.tell(ctx, channel, thread, sub.User, text, nil) }
	if why := b.unsaveable(r); why != "" {
		tell(why)
		return
	}
	dir := intake.Dir(b.cfg.WorkflowsDir)
	if info, ok := dir.Find(sub.Name); ok && info.ModTime().Before(received) {
		return
	}
	path, err := b.writeWorkflow(dir, sub.Name, r)
	switch {
	case errors.Is(err, fs.ErrExist):
		tell(fmt.Sprintf("A workflow named `%s` exists already, so nothing was saved. Press *Save as workflow* again and choose another name.", sub.Name))
	case err != nil:
		b.cfg.Log.Error("save a chain as a workflow", "run", r.ID, "name", sub.Name, "err", err)
		tell("gonogo could not save the workflow; nothing was saved. The operator can find why in gonogo's log.")
	default:
		b.cfg.Log.Info("chain saved as a workflow", "run", r.ID, "name", sub.Name, "path", path, "by", sub.User)
		tell(fmt.Sprintf("💾 Saved as workflow `%s` (`%s` in the workflows directory). Run it with `%s run %s -- CONTEXT` (in a terminal: `gonogo run --workflow %s`).",
			sub.Name, mdLine(filepath.Base(path), 200), b.cfg.SlashCommand, sub.Name, sub.Name))
	}
}

// writeWorkflow writes chain r as workflow name in dir and returns its
// path; fs.ErrExist when another file has the name.
func (b *Bot) writeWorkflow(dir intake.Dir, name string, r *engine.Run) (string, error) {
	src, err := intake.ChainWorkflow(name, engine.ChainExpr{Names: chainSkills(r), Flags: engine.Flags{Thread: r.Thread}})
	if err != nil {
		return "", err
	}
	path, err := dir.Save(name, src, false)
	if errors.Is(err, fs.ErrExist) {
		// The same submission carried out again (kept before a restart):
		// the file it wrote is there, and it is told as saved.
		p := filepath.Join(b.cfg.WorkflowsDir, name+".yaml")
		if old, rerr := os.ReadFile(p); rerr == nil && bytes.Equal(old, src) {
			return p, nil
		}
	}
	return path, err
}

// saveProblem is why a "Save as workflow" submission's name, well formed,
// cannot be used (a workflow of that name exists), or "". It reads nothing
// but the workflows directory's entries for that name: the
// acknowledgement waits for it.
func (b *Bot) saveProblem(sub Submission) string {
	if b.cfg.WorkflowsDir == "" {
		return "" // the handler says so
	}
	if _, ok := intake.Dir(b.cfg.WorkflowsDir).Find(sub.Name); ok {
		return fmt.Sprintf("a workflow named %s exists already: choose another name", sub.Name)
	}
	return ""
}

// chainSkills are the skills of a chain's steps, in order.
func chainSkills(r *engine.Run) []string {
	out := make([]string, 0, len(r.Steps))
	for i := range r.Steps {
		out = append(out, r.Steps[i].Skill)
	}
	return out
}

// workflowNameFor proposes a name for a chain saved as a workflow: the
// words of its skills in order, each word once ("deliver-prd" and
// "deliver-user-stories" make "deliver-prd-user-stories"), cut at a dash to
// leave room for a number, and numbered ("-2", "-3", ...) past the names
// taken says are in use. It is only a proposal: the person may change it.
func workflowNameFor(skills []string, taken func(string) bool) string {
	base := strings.Join(nameWords(skills, MaxWorkflowName-4), "-")
	if !engine.ValidSkillName(base) {
		base = "saved-chain"
	}
	name := base
	for i := 2; taken(name) && i < 1000; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	return name
}

// nameWords are the words of skills, in order and each once, as many as
// fit in room characters joined by dashes.
func nameWords(skills []string, room int) []string {
	seen := map[string]bool{}
	var words []string
	n := 0
	for _, s := range skills {
		for _, w := range strings.Split(s, "-") {
			if w == "" || seen[w] {
				continue
			}
			if n+len(w) > room {
				return words
			}
			seen[w] = true
			words = append(words, w)
			n += len(w) + 1
		}
	}
	return words
}

// hideDir keeps the server's workflows directory out of what Slack shows:
// a refusal names the file only.
func hideDir(err error, dir string) error {
	strip := func(s string) string {
		return strings.ReplaceAll(s, strings.TrimSuffix(dir, "/")+"/", "")
	}
	var ref *engine.Refusal
	if errors.As(err, &ref) {
		c := *ref
		c.Source, c.Message = filepath.Base(c.Source), strip(c.Message)
		return &c
	}
	return errors.New(strip(err.Error()))
}
