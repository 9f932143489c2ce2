package bot_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/bot"
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/fakeslack"
	"github.com/gonogo/gonogo/internal/intake"
)

// Named workflows from Slack, end to end: /gonogo run reads the file,
// checks it and starts the run; parallel steps wait for decisions in
// messages of their own; step rules (on_error: gate, decompose) show in the
// thread; and a finished chain is saved as a workflow through its modal.

// diamondYAML is a workflow whose middle steps run in parallel: prd, then
// stories and experiment at once, then review once both are settled.
const diamondYAML = `name: diamond
description: A PRD, two branches from it, and a review that joins them.
args:
  feature: {required: true}
steps:
  - id: prd
    skill: deliver-prd
    prompt: Write the PRD for {{feature}}.
  - id: stories
    skill: deliver-user-stories
    depends_on: prd
    prompt: |
      Stories from the PRD:
      {{steps.prd.output}}
  - id: experiment
    skill: measure-experiment-design
    depends_on: prd
  - id: review
    skill: deliver-prd
    depends_on: [stories, experiment]
`

// workflows writes the named workflow files into a new directory.
func workflows(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// buttonLabels are the labels of a message's buttons, in order.
func buttonLabels(m fakeslack.Message) []string {
	var out []string
	for _, b := range m.Buttons() {
		out = append(out, b.Text)
	}
	return out
}

// waitDecided waits until the message ts shows want and no buttons.
func waitDecided(t *testing.T, srv *fakeslack.Server, ts string, want ...string) fakeslack.Message {
	t.Helper()
	return waitMsg(t, srv, "decided, showing "+strings.Join(want, ", "), func(m fakeslack.Message) bool {
		return m.TS == ts && len(m.Buttons()) == 0 && containsAll(m.Rendered, want...)
	})
}

func TestWorkflowDiamondRunsToCompletionByClicking(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	h := start(t, srv, t.TempDir(), runner, withWorkflows(workflows(t, map[string]string{"diamond.yaml": diamondYAML})))

	slash(t, srv, starter, "run diamond --arg feature=guest-checkout -- mobile shoppers")
	waitText(t, srv, "gonogo workflow run: diamond", "Workflow: `diamond`", "Arguments: `feature` = guest-checkout")
	prd := waitStep(t, srv, 1, "deliver-prd", "(prd)", "Approve")
	click(t, srv, starter, prd, "Approve")

	stories := waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	experiment := waitStep(t, srv, 3, "measure-experiment-design", "Approve")
	click(t, srv, starter, stories, "Approve")
	waitDecided(t, srv, stories.TS, "Approved")
	click(t, srv, starter, experiment, "Approve")

	review := waitStep(t, srv, 4, "deliver-prd", "(review)", "Approve")
	click(t, srv, starter, review, "Approve")
	waitText(t, srv, "Run complete", "workflow `diamond`")

	r := h.onlyRun()
	if r.State != engine.RunCompleted || r.Input != engine.InputWorkflow || r.Plan.Source != "diamond" {
		t.Errorf("run is %s %s %q, want a completed workflow run of diamond", r.State, r.Input, r.Plan.Source)
	}
	if r.StartedBy != starter || r.Origin.Channel != channel {
		t.Errorf("run started by %q in %q", r.StartedBy, r.Origin.Channel)
	}
	var prdJob, storiesJob engine.Job
	for _, j := range runner.jobs() {
		switch j.Step {
		case 1:
			prdJob = j
		case 2:
			storiesJob = j
		}
	}
	if !strings.Contains(prdJob.Prompt, "Write the PRD for guest-checkout.") || !strings.Contains(prdJob.Prompt, "mobile shoppers") {
		t.Errorf("step 1 was not given its argument and the context:\n%s", prdJob.Prompt)
	}
	if !strings.Contains(storiesJob.Prompt, "A finished artifact for step 1, attempt 1.") {
		t.Errorf("step 2 was not given step 1's confirmed output:\n%s", storiesJob.Prompt)
	}
}

func TestParallelBranchesWaitInTheirOwnMessages(t *testing.T) {
	srv := newSlack(t)
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withWorkflows(workflows(t, map[string]string{"diamond.yaml": diamondYAML})))

	slash(t, srv, starter, "run diamond --arg feature=search")
	click(t, srv, starter, waitStep(t, srv, 1, "deliver-prd", "Approve"), "Approve")

	// Both branches wait at once, each in its own message with its own buttons.
	stories := waitStep(t, srv, 2, "deliver-user-stories", "Approve")
	experiment := waitStep(t, srv, 3, "measure-experiment-design", "Approve")
	if stories.TS == experiment.TS {
		t.Fatal("the two waiting steps share one message")
	}
	want := []string{"Approve", "Edit", "Skip", "Redo", "Abort"}
	for _, m := range []fakeslack.Message{stories, experiment} {
		if got := buttonLabels(m); !slices.Equal(got, want) {
			t.Errorf("%.40q offers %v, want %v", m.Text, got, want)
		}
	}
	waitText(t, srv, "waiting for a decision on steps 2, 3")

	// The second branch first: the first keeps waiting, with its buttons.
	click(t, srv, starter, experiment, "Approve")
	waitDecided(t, srv, experiment.TS, "Approved")
	if m, _ := srv.Message(channel, stories.TS); !slices.Equal(buttonLabels(m), want) {
		t.Errorf("deciding step 3 changed step 2's buttons to %v", buttonLabels(m))
	}
	if s := h.onlyRun().Steps[3]; s.Status != engine.StepPending {
		t.Errorf("the join step is %s while step 2 still waits, want pending", s.Status)
	}
	click(t, srv, starter, stories, "Approve")
	click(t, srv, starter, waitStep(t, srv, 4, "deliver-prd", "Approve"), "Approve")
	waitText(t, srv, "Run complete")

	r := h.onlyRun()
	ds := h.decisions(r.ID)
	var order []int
	for _, d := range ds {
		order = append(order, d.Step)
	}
	if !slices.Equal(order, []int{1, 3, 2, 4}) {
		t.Errorf("decisions were applied to steps %v, want 1, 3, 2, 4", order)
	}
}

func TestGateOnErrorStepIsSkippedByTheTeam(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	runner.script("deliver-prd", engine.Outcome{ExitCode: 1, Stderr: "the model is overloaded"})
	dir := workflows(t, map[string]string{"gated.yaml": `steps:
  - id: prd
    skill: deliver-prd
    on_error: gate
  - id: stories
    skill: deliver-user-stories
    depends_on: prd
`})
	h := start(t, srv, t.TempDir(), runner, withWorkflows(dir))

	slash(t, srv, starter, "run gated")
	step1 := waitStep(t, srv, 1, "deliver-prd", "FAILED", "on_error is *gate*")
	if got, want := buttonLabels(step1), []string{"Edit", "Skip", "Redo", "Abort"}; !slices.Equal(got, want) {
		t.Fatalf("the failed gate step offers %v, want %v", got, want)
	}
	halt := waitText(t, srv, "Run halted", "*Skip* goes on without it")
	if got := buttonLabels(halt); !slices.Equal(got, []string{"Edit", "Skip", "Redo", "Abort"}) {
		t.Errorf("the halt notice offers %v", got)
	}

	// The failed attempt has no artifact: Edit opens an empty box to write one.
	click(t, srv, starter, step1, "Edit")
	modal := waitView(t, srv, 0)
	if modal.CallbackID != bot.ModalEdit || initialValue(t, modal, bot.InputArtifact) != "" ||
		!strings.Contains(modal.Rendered, "has no artifact") {
		t.Fatalf("edit modal %q holds %q:\n%s", modal.CallbackID, initialValue(t, modal, bot.InputArtifact), modal.Rendered)
	}

	click(t, srv, starter, step1, "Skip")
	waitDecided(t, srv, step1.TS, "Skipped by")
	click(t, srv, starter, waitStep(t, srv, 2, "deliver-user-stories", "Approve"), "Approve")
	waitText(t, srv, "Run complete")
	waitMsg(t, srv, "of the halt handled", func(m fakeslack.Message) bool {
		return m.TS == halt.TS && strings.Contains(m.Rendered, "This halt was handled") && len(m.Buttons()) == 0
	})
	r := h.onlyRun()
	if r.Steps[0].Status != engine.StepSkipped || r.Steps[1].Status != engine.StepDone {
		t.Errorf("steps are %s and %s, want skipped and done", r.Steps[0].Status, r.Steps[1].Status)
	}
}

func TestDecomposeStepAddsSubStepsShownUnderIt(t *testing.T) {
	srv := newSlack(t)
	runner := &scriptedRunner{}
	runner.script("deliver-prd", engine.Outcome{Artifact: []byte(`{"tasks": [
		{"name": "Fix login"},
		{"name": "Fix checkout", "group": "payments"},
		{"name": "Write the docs", "depends_on": ["Fix login"]}]}`)})
	dir := workflows(t, map[string]string{"split.yaml": `steps:
  - id: plan
    skill: deliver-prd
    decompose: {skill: deliver-user-stories}
`})
	h := start(t, srv, t.TempDir(), runner, withWorkflows(dir))

	slash(t, srv, starter, "run split --auto")
	waitText(t, srv, "Run complete")
	waitStep(t, srv, 1, "deliver-prd", "Step 1 `plan` split its work into 3 tasks", "steps 2 to 4")
	for n, title := range map[int]string{2: "Fix login", 3: "payments › Fix checkout", 4: "Write the docs"} {
		waitStep(t, srv, n, fmt.Sprintf("Step %d of 4: deliver-user-stories", n), title, "Sub-step of step 1 `plan`")
	}
	// The header lists the tasks under the step that added them.
	waitText(t, srv, "gonogo workflow run: split", "1. deliver-prd (plan)", "\u2003↳ 2. deliver-user-stories (Fix login)",
		"\u2003↳ 3. deliver-user-stories (payments › Fix checkout)", "\u2003↳ 4. deliver-user-stories (Write the docs)")
	r := h.onlyRun()
	if len(r.Steps) != 4 || r.State != engine.RunCompleted {
		t.Fatalf("run has %d steps and is %s, want 4 and completed", len(r.Steps), r.State)
	}
	for _, s := range r.Steps[1:] {
		if s.Parent != 1 || s.Skill != "deliver-user-stories" {
			t.Errorf("step %d: parent %d, skill %s", s.N, s.Parent, s.Skill)
		}
	}
}

func TestWorkflowRefusals(t *testing.T) {
	srv := newSlack(t)
	dir := workflows(t, map[string]string{
		"diamond.yaml": diamondYAML,
		"broken.yaml": `name: broken
steps:
  - id: prd
    skill: deliver-prd
    gaet: always
  - id: stories
    skill: deliver-user-stories
    depends_on: prd
    timeout: soon
`,
		"empty.yaml": "",
		"twice.yaml": diamondYAML,
		"twice.yml":  diamondYAML,
	})
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withWorkflows(dir))

	cases := []struct {
		name, text string
		want       []string
	}{
		{"unknown name", "run diamnod", []string{"Refused", "unknown-workflow", "there is no workflow `diamnod`",
			"did you mean `diamond`?", "The 4 workflows: `broken`, `diamond`, `empty`, `twice`", "Nothing was run"}},
		{"missing argument", "run diamond -- ctx", []string{"Refused", "workflow `diamond` cannot run: 1 problem in `diamond.yaml`",
			`line 4: missing required argument "feature": give it with --arg feature=VALUE`}},
		{"argument not declared", "run diamond --arg feature=x --arg featrue=y", []string{"argument \"featrue\" was given",
			"did you mean `feature`?"}},
		{"two problems in the file", "run broken", []string{"workflow `broken` cannot run: 2 problems in `broken.yaml`",
			`line 5: step "prd": unknown key "gaet" (did you mean "gate"?)`, `line 9: step "stories": "timeout" "soon" is not a duration`}},
		{"malformed name", "run Diamond", []string{`(did you mean "diamond"?)`, "/gonogo run WORKFLOW"}},
		{"empty file", "run empty", []string{"Refused", "empty.yaml"}},
		{"two files of one name", "run twice", []string{"Refused", "twice.yaml", "twice.yml"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			slash(t, srv, starter, c.text)
			e := waitEphemeralN(t, srv, starter, i+1)
			for _, w := range c.want {
				if !strings.Contains(e.Rendered, w) {
					t.Errorf("the refusal does not say %q:\n%s", w, e.Rendered)
				}
			}
			if strings.Contains(e.Rendered, dir) {
				t.Errorf("the refusal shows the server's directory %s:\n%s", dir, e.Rendered)
			}
		})
	}
	if n := h.runCount(); n != 0 {
		t.Errorf("refused commands started %d runs", n)
	}
	if len(botMessages(srv, "")) != 0 {
		t.Errorf("a refusal posted in the channel: %s", dump(srv))
	}
}

func TestSaveChainAsWorkflow(t *testing.T) {
	srv := newSlack(t)
	dir := filepath.Join(t.TempDir(), "workflows") // created by the first save
	h := start(t, srv, t.TempDir(), &scriptedRunner{}, withWorkflows(dir))

	slash(t, srv, starter, "chain deliver-prd -> deliver-user-stories --thread -- mobile checkout")
	click(t, srv, starter, waitStep(t, srv, 1, "deliver-prd", "Approve"), "Approve")
	click(t, srv, starter, waitStep(t, srv, 2, "deliver-user-stories", "Approve"), "Approve")
	done := waitText(t, srv, "Run complete", "Save as workflow")

	// Only people who may decide on the run may save it: the modal opened
	// on the click says so.
	click(t, srv, "U0STRANGER", done, "Save as workflow")
	waitNoticeModal(t, srv, "U0STRANGER", "Only <@"+starter+">", "can save it as a workflow", "Nothing was saved")

	click(t, srv, starter, done, "Save as workflow")
	modal := waitView(t, srv, 1)
	if modal.CallbackID != bot.ModalSaveWorkflow || modal.User != starter {
		t.Fatalf("opened modal %q for %s, want the save-workflow modal for %s", modal.CallbackID, modal.User, starter)
	}
	const name = "deliver-prd-user-stories"
	if got := initialValue(t, modal, bot.InputWorkflowName); got != name {
		t.Errorf("the name box holds %q, want %q", got, name)
	}
	env, err := srv.SubmitView(starter, modal.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := ack(t, srv, env); len(a.Payload) != 0 && string(a.Payload) != "null" {
		t.Errorf("a usable name was answered %s", a.Payload)
	}
	saved := waitEphemeral(t, srv, starter, "Saved as workflow `"+name+"`", "/gonogo run "+name)
	path := filepath.Join(dir, name+".yaml")
	if !strings.Contains(saved.Rendered, name+".yaml") || strings.Contains(saved.Rendered, dir) {
		t.Errorf("the reply does not name the file, or shows the server's directory (%s): %s", path, saved.Rendered)
	}
	spec, err := intake.Dir(dir).Workflow(name)
	if err != nil {
		t.Fatalf("the saved workflow does not load: %v", err)
	}
	var skills []string
	for _, s := range spec.Steps {
		skills = append(skills, s.Skill)
	}
	if !slices.Equal(skills, []string{"deliver-prd", "deliver-user-stories"}) || !strings.Contains(spec.Steps[1].Prompt, "{{steps.deliver-prd.output}}") {
		t.Errorf("the saved workflow is %+v, want the chain's skills, threaded", spec.Steps)
	}

	// Saving again: the name is taken, and a malformed one is refused by
	// the field; the modal stays open and nothing is written.
	click(t, srv, starter, done, "Save as workflow")
	again := waitView(t, srv, 2)
	if got := initialValue(t, again, bot.InputWorkflowName); got != name+"-2" {
		t.Errorf("the second modal proposes %q, want a free name", got)
	}
	for value, want := range map[string]string{name: "exists already", "Bad Name": "lower-case letters, digits and dashes"} {
		env, err := srv.SubmitView(starter, again.ID, map[string]string{bot.InputWorkflowName: value})
		if err != nil {
			t.Fatal(err)
		}
		var resp slack.ViewSubmissionResponse
		if err := json.Unmarshal(ack(t, srv, env).Payload, &resp); err != nil {
			t.Fatalf("the ack of %q carries no response: %v", value, err)
		}
		if resp.ResponseAction != slack.RAErrors || !strings.Contains(resp.Errors[bot.BlockWorkflowName], want) {
			t.Errorf("name %q was answered %+v, want a field error saying %q", value, resp, want)
		}
	}
	settle(srv, 50*time.Millisecond, time.Second)
	if n := len(afterAcks(srv.Ephemerals(starter))); n != 1 {
		t.Errorf("the starter was told %d things, want only the one save", n)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the workflows directory holds %d files, want 1", len(entries))
	}
	if h.runCount() != 1 {
		t.Error("saving started a run")
	}
}
