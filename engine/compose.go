package engine

import (
	"fmt"
	"path/filepath"
	"strings"
)

// PromptInput is everything a step's prompt is composed from.
type PromptInput struct {
	Run      *Run
	Step     *Step
	Skill    Skill
	Leaf     string // a dispatch skill's leaf agent instructions, inlined
	Threaded []byte // the confirmed artifact of the step this one is threaded from
	Feedback string // the reviewer's redo feedback
	Previous []byte // the artifact of the attempt being redone, when there is one
}

// ComposePrompt builds the prompt an agent receives on stdin: what gonogo
// asks, the skill's own instructions (or, for a dispatch skill, its leaf
// agent's, inlined) and where the skill's files are, the step's prompt or
// the chain's shared context, the threaded artifact when asked, and the
// reviewer's feedback on a redo.
func ComposePrompt(in PromptInput) string {
	var b strings.Builder
	s, r := in.Step, in.Run
	fmt.Fprintf(&b, "You are carrying out step %d of %d of a run, using the skill `%s`.\n", s.N, len(r.Steps), s.Skill)
	b.WriteString("Follow the skill's instructions below and reply with the finished artifact only, as Markdown: no preamble, no questions. ")
	b.WriteString("If you cannot do the task, reply with a single line that starts with `ERROR:` and says why.\n\n")
	if in.Leaf != "" {
		fmt.Fprintf(&b, "<agent name=%q>\nThis step runs the `%s` agent's instructions inline, in your own context; do not start a sub-agent.\n\n%s\n</agent>\n\n", s.Leaf, s.Leaf, strings.TrimSpace(in.Leaf))
	}
	if ins := strings.TrimSpace(in.Skill.Instructions); ins != "" {
		fmt.Fprintf(&b, "<skill name=%q>\n%s\n</skill>\n\n", s.Skill, ins)
	}
	writeSkillFiles(&b, in.Skill)
	b.WriteString("## Task\n\n")
	b.WriteString(stepTask(s, r.Plan.Context))
	b.WriteString("\n")
	writeInputs(&b, in)
	return b.String()
}

// stepTask is what step s is asked to do: its prompt, with the run's shared
// context after it; the context alone for a step with no prompt; else to
// produce its skill's artifact.
func stepTask(s *Step, context string) string {
	task := strings.TrimSpace(s.Prompt)
	if task == "" {
		task = strings.TrimSpace(context)
	} else if c := strings.TrimSpace(context); c != "" {
		task += "\n\nShared context: " + c
	}
	if task == "" {
		task = fmt.Sprintf("Produce the `%s` artifact.", s.Skill)
	}
	return task
}

// writeInputs writes what the step is given after its task: the artifact
// threading hands on, and on a redo the previous attempt with the
// reviewer's feedback.
func writeInputs(b *strings.Builder, in PromptInput) {
	s, r := in.Step, in.Run
	if len(in.Threaded) > 0 {
		from := r.Step(s.ThreadFrom)
		fmt.Fprintf(b, "\n## Input: the confirmed artifact of step %d (`%s`)\n\n%s\n", from.N, from.Skill, strings.TrimSpace(string(in.Threaded)))
	}
	if len(in.Previous) > 0 && strings.TrimSpace(in.Feedback) != "" {
		fmt.Fprintf(b, "\n## Your previous attempt\n\n%s\n", strings.TrimSpace(string(in.Previous)))
	}
	if f := strings.TrimSpace(in.Feedback); f != "" {
		fmt.Fprintf(b, "\n## Reviewer feedback on the previous attempt\n\n%s\n", f)
	}
}

// SkillDir is the absolute path of a skill's folder, the one holding its
// SKILL.md and references/: the catalog's Dir, else the folder of its
// Path; "" for a skill that was never on disk.
func SkillDir(sk Skill) string {
	dir := sk.Dir
	if dir == "" && strings.TrimSpace(sk.Path) != "" {
		dir = filepath.Dir(sk.Path)
	}
	if dir == "" {
		return ""
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return dir
}

// writeSkillFiles tells the agent where the skill's own files are. The
// agent runs in another directory, so a relative "references/TEMPLATE.md"
// in the instructions would not resolve; the runners give the agent read
// access to this folder.
func writeSkillFiles(b *strings.Builder, sk Skill) {
	dir := SkillDir(sk)
	if dir == "" {
		return
	}
	fmt.Fprintf(b, "The skill's files are in the folder `%s`: paths in its instructions (such as `references/...`) are relative to that folder, so read them there", dir)
	if sk.HasTemplate || sk.Template != "" || len(sk.TemplateSections) > 0 {
		fmt.Fprintf(b, "; its template is `%s`", filepath.Join(dir, "references", "TEMPLATE.md"))
	}
	if sk.HasExample {
		fmt.Fprintf(b, "; an example of a finished artifact is `%s`", filepath.Join(dir, "references", "EXAMPLE.md"))
	}
	b.WriteString(".\n\n")
}

// ThreadSource is the step whose confirmed artifact the threaded step s is
// handed, and the steps passed over to find it, nearest first. A step that
// was skipped, or confirmed without an artifact, hands on the artifact it
// would itself have received: the nearest earlier step on the thread that
// confirmed one. It is nil when s is not threaded, when no such step
// exists (s then runs without), or past an optional step that was given up
// on (the run goes on without its output).
func ThreadSource(r *Run, s *Step) (from *Step, passed []*Step) {
	from = r.Step(s.ThreadFrom)
	for from != nil {
		l := from.Latest()
		switch {
		case from.Status == StepSkipped && from.Rules.Optional:
			return nil, append(passed, from)
		case from.Status == StepSkipped, from.Status == StepDone && (l == nil || !l.Artifact):
			passed = append(passed, from)
			from = r.Step(from.ThreadFrom)
		default:
			return from, passed
		}
	}
	return nil, passed
}
