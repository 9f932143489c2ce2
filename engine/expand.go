package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// WorkflowSource finds named workflows: the ones a route step's output
// names.
type WorkflowSource interface {
	// Workflow returns the named workflow, or an error wrapping ErrNotFound.
	Workflow(name string) (WorkflowSpec, error)
}

// Limits on what an agent's output may add to a run, so an agent that
// plans its own work cannot grow a run without end.
const (
	MaxRunSteps   = 500 // steps in one run, with everything added
	MaxTasks      = 100 // tasks one decompose step may add
	MaxExpandNest = 4   // route and decompose steps inside added steps, nested
)

// Expander turns a route or decompose step's output into the steps it
// adds to the run: a route step's output names a workflow (a name, or
// JSON {"workflow": "NAME"}) whose steps continue the run; a decompose
// step's output is JSON {"tasks": [{"name", "group", "depends_on"}]}, one
// step per task, run with the step's decompose skill. Output that does not
// say that is an error describing what is wrong, which fails the step.
//
// Added steps are named "<step id>.<their id>" (a task's id is its name in
// lower case, dashes for anything else), depend on the step that added them
// when they depend on nothing of their own, and are checked like a workflow
// file's: installed skills, dependencies, cycles, a routed workflow's
// required arguments (the run's own arguments are given to it).
type Expander struct {
	Workflows WorkflowSource // nil: no route step can run
	Catalog   Catalog
	Policy    Policy
}

// Expand returns the steps s adds to r for output; nil when s is neither a
// route nor a decompose step.
func (x Expander) Expand(r *Run, s *Step, output []byte) ([]PlanStep, error) {
	if !expands(s) {
		return nil, nil
	}
	if strings.Count(s.ID, ".") >= MaxExpandNest {
		return nil, fmt.Errorf("step %q is nested %d deep in steps added by other steps; gonogo stops there so a workflow cannot route to itself forever",
			s.ID, strings.Count(s.ID, "."))
	}
	var added []PlanStep
	var err error
	if s.Rules.Route {
		added, err = x.route(r, s, output)
	} else {
		added, err = x.decompose(r, s, output)
	}
	if err != nil {
		return nil, err
	}
	if n := len(r.Steps) + len(added); n > MaxRunSteps {
		return nil, fmt.Errorf("step %q would grow the run to %d steps; a run holds at most %d", s.ID, n, MaxRunSteps)
	}
	return added, nil
}

// expands reports whether s is a route or a decompose step, whose
// output adds steps to its run.
func expands(s *Step) bool {
	return s.Rules.Route || s.Rules.Decompose != ""
}

func (x Expander) route(r *Run, s *Step, output []byte) ([]PlanStep, error) {
	name, err := RouteTarget(output)
	if err != nil {
		return nil, err
	}
	if x.Workflows == nil {
		return nil, fmt.Errorf("route: the output names workflow %q, but no workflows directory is set (GONOGO_WORKFLOWS_DIR)", name)
	}
	spec, err := x.Workflows.Workflow(name)
	if err != nil {
		return nil, fmt.Errorf("route: %w", err)
	}
	p, err := PreflightWorkflow(spec, declaredArgs(spec, r.Plan.Args), r.Plan.Context, Flags{}, x.Catalog, x.Policy)
	if err != nil {
		return nil, fmt.Errorf("route: the workflow cannot run: %w", err)
	}
	return prefixed(s.ID, p.Steps), nil
}

// declaredArgs are the run's arguments (given) that spec declares: a
// routed workflow is given those.
func declaredArgs(spec WorkflowSpec, given map[string]string) map[string]string {
	args := map[string]string{}
	for _, a := range spec.Args {
		if v, ok := given[a.Name]; ok {
			args[a.Name] = v
		}
	}
	return args
}

// RouteTarget reads the workflow a route step's output names: JSON
// {"workflow": "NAME"} (bare or in a ```json block), or the name alone.
func RouteTarget(output []byte) (string, error) {
	body := jsonBody(string(output))
	if strings.HasPrefix(body, "{") {
		return routeJSON(body)
	}
	name := strings.Trim(strings.TrimSpace(string(output)), "`*\"'.")
	if !ValidSkillName(name) {
		return "", fmt.Errorf(`route: the output must be a workflow name or {"workflow": "NAME"}, not %q`, wfClip(strings.TrimSpace(string(output)), 80))
	}
	return name, nil
}

// routeJSON reads the workflow {"workflow": "NAME"} names.
func routeJSON(body string) (string, error) {
	var v struct {
		Workflow string `json:"workflow"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		return "", fmt.Errorf(`route: the output is not the JSON gonogo reads ({"workflow": "NAME"}): %s`, jsonProblem(body, err))
	}
	if v.Workflow == "" {
		return "", errors.New(`route: the output's JSON names no workflow: write {"workflow": "NAME"}`)
	}
	if !ValidSkillName(v.Workflow) {
		return "", fmt.Errorf("route: %q is not a workflow name (lower-case letters, digits and dashes)", wfClip(v.Workflow, 60))
	}
	return v.Workflow, nil
}

// Task is one task of a decompose step's output.
type Task struct {
	Name      string   `json:"name"`
	Group     string   `json:"group"`
	DependsOn []string `json:"depends_on"`
}

// ReadTasks reads a decompose step's output: JSON {"tasks": [...]}, bare or
// in a ```json block.
func ReadTasks(output []byte) ([]Task, error) {
	body := jsonBody(string(output))
	var v struct {
		Tasks *[]Task `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		return nil, fmt.Errorf(`decompose: the output is not the JSON gonogo reads ({"tasks": [{"name", "group", "depends_on"}]}): %s`, jsonProblem(body, err))
	}
	if err := checkTasks(v.Tasks); err != nil {
		return nil, err
	}
	return *v.Tasks, nil
}

// checkTasks refuses a task list that is missing, empty, too long, or
// holds a task without a name.
func checkTasks(tasks *[]Task) error {
	switch {
	case tasks == nil:
		return errors.New(`decompose: the output's JSON has no "tasks" list`)
	case len(*tasks) == 0:
		return errors.New("decompose: the output lists no tasks")
	case len(*tasks) > MaxTasks:
		return fmt.Errorf("decompose: the output lists %d tasks; a step may add at most %d", len(*tasks), MaxTasks)
	}
	for i, t := range *tasks {
		if strings.TrimSpace(t.Name) == "" {
			return fmt.Errorf("decompose: task %d has no name", i+1)
		}
	}
	return nil
}

func (x Expander) decompose(r *Run, s *Step, output []byte) ([]PlanStep, error) {
	tasks, err := ReadTasks(output)
	if err != nil {
		return nil, err
	}
	ids, byName, err := taskIDs(tasks)
	if err != nil {
		return nil, err
	}
	spec, err := taskSpec(s, tasks, ids, byName)
	if err != nil {
		return nil, err
	}
	p, err := PreflightWorkflow(spec, nil, r.Plan.Context, Flags{}, x.Catalog, x.Policy)
	if err != nil {
		return nil, fmt.Errorf("decompose: %w", err)
	}
	steps := prefixed(s.ID, p.Steps)
	for i := range steps {
		// The task's name is its title; the id stays its handle.
		j := taskIndex(ids, p.Steps[i].ID)
		steps[i].Effort = taskTitle(tasks[j])
	}
	return steps, nil
}

// taskIDs gives each task a step id of its own, made from its name, and
// maps each name to its id; two tasks of one name are refused.
func taskIDs(tasks []Task) ([]string, map[string]string, error) {
	ids := make([]string, len(tasks))
	byName := map[string]string{}
	used := map[string]bool{}
	for i, t := range tasks {
		name := strings.TrimSpace(t.Name)
		if _, dup := byName[name]; dup {
			return nil, nil, fmt.Errorf("decompose: two tasks are named %q; task names must differ", wfClip(name, 60))
		}
		id := taskID(name, i)
		for n := 2; used[id]; n++ {
			id = fmt.Sprintf("%s-%d", taskID(name, i), n)
		}
		used[id], ids[i], byName[name] = true, id, id
	}
	return ids, byName, nil
}

// taskSpec is the workflow of decompose step s's tasks, one step each,
// which pre-flight checks as it checks any workflow.
func taskSpec(s *Step, tasks []Task, ids []string, byName map[string]string) (WorkflowSpec, error) {
	spec := WorkflowSpec{Name: s.ID, Source: fmt.Sprintf("the tasks of step %q", s.ID)}
	for i, t := range tasks {
		ws, err := taskStep(s, t, ids[i], byName)
		if err != nil {
			return WorkflowSpec{}, err
		}
		spec.Steps = append(spec.Steps, ws)
	}
	return spec, nil
}

// taskStep is the workflow step (id) that carries out task t of
// decompose step s; the tasks it depends on are named by name (byName).
func taskStep(s *Step, t Task, id string, byName map[string]string) (WorkflowStep, error) {
	ws := WorkflowStep{ID: id, Skill: s.Rules.Decompose, Prompt: taskPrompt(s, t)}
	for _, d := range t.DependsOn {
		dep, ok := byName[strings.TrimSpace(d)]
		if !ok {
			return WorkflowStep{}, fmt.Errorf("decompose: task %q depends on %q, which is not a task of the list", wfClip(t.Name, 60), wfClip(d, 60))
		}
		ws.DependsOn = append(ws.DependsOn, dep)
	}
	return ws, nil
}

func taskIndex(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return 0
}

// taskID makes a step id from a task name: lower case letters and digits,
// dashes for the rest, at most 40 characters.
func taskID(name string, i int) string {
	if id := slug(name, 40); id != "" {
		return id
	}
	return fmt.Sprintf("task-%d", i+1)
}

// slug is name in lower case letters and digits, each run of other
// characters one dash (none at either end), cut near limit characters.
func slug(name string, limit int) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		switch {
		case ok:
			b.WriteRune(c)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= limit {
			break
		}
	}
	return strings.TrimRight(b.String(), "-")
}

func taskTitle(t Task) string {
	if g := strings.TrimSpace(t.Group); g != "" {
		return g + " › " + strings.TrimSpace(t.Name)
	}
	return strings.TrimSpace(t.Name)
}

// taskPrompt is what a task step is asked. Text from the agent is never
// read as a {{reference}}.
func taskPrompt(s *Step, t Task) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Task: %s\n", strings.TrimSpace(t.Name))
	if g := strings.TrimSpace(t.Group); g != "" {
		fmt.Fprintf(&b, "Group: %s\n", g)
	}
	fmt.Fprintf(&b, "\nThis task is one of those step %q broke its work into; carry out this task only.", s.ID)
	return strings.ReplaceAll(b.String(), "{{", "{ {")
}

// prefixed names the steps of an expansion under the step that added them:
// ids, dependencies and {{steps.ID.output}} references alike. A step with
// no dependency of its own waits for the adding step.
func prefixed(parent string, steps []PlanStep) []PlanStep {
	rename := make(map[string]string, len(steps))
	for _, ps := range steps {
		rename[ps.ID] = parent + "." + ps.ID
	}
	out := make([]PlanStep, len(steps))
	for i, ps := range steps {
		ps.ID = rename[ps.ID]
		ps.Effort = ps.ID
		ps.DependsOn = renamedDeps(ps.DependsOn, rename, parent)
		ps.Prompt = expandPromptRefs(ps.Prompt, func(name string) (string, bool) {
			if id, ok := stepRef(name); ok && rename[id] != "" {
				return "{{steps." + rename[id] + ".output}}", true
			}
			return "", false
		})
		out[i] = ps
	}
	return out
}

// renamedDeps are the dependencies deps of an added step, renamed; a
// step with none waits for the step that added it (parent).
func renamedDeps(deps []string, rename map[string]string, parent string) []string {
	if len(deps) == 0 {
		return []string{parent}
	}
	out := make([]string, 0, len(deps))
	for _, d := range deps {
		out = append(out, rename[d])
	}
	return out
}

// stepRef reads a {{steps.ID.output}} reference; ids of added steps hold
// dots.
func stepRef(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "steps.")
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, ".output")
	return id, ok && id != ""
}
