package intake

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

// Request is one ask to start a run, as a front end received it: the
// input, the flags given with it, and who asked.
type Request struct {
	// Input says which of the fields below hold the input.
	Input engine.InputKind

	// A plan (engine.InputPlan): the document, the name it goes by in
	// messages (its file), and its whole size when Plan holds only its
	// start (a front end reads at most one byte past the limit; 0 when the
	// size is not known).
	Plan     []byte
	PlanName string
	PlanSize int64

	// A chain (engine.InputChain): the expression as typed, its own flags
	// and "-- context" included.
	Chain string

	// A workflow (engine.InputWorkflow): its name, its arguments and the
	// context every step is given.
	Workflow string
	Args     map[string]string
	Context  string

	// Flags are the flags given besides the input (on the command line, in
	// a Slack message); a chain's own flags add to them.
	Flags engine.Flags

	// Who asked, where the run belongs, and the idempotency key of the
	// start ("" for none): a start whose key the store has seen is refused
	// with engine.ErrDuplicate, so a redelivered request starts one run.
	StartedBy string
	Origin    engine.Origin
	Key       string
}

// Config is what a front end was set up with: what the intake reads from,
// and the defaults of every run it starts.
type Config struct {
	// Catalog reads the installed skills. It is called only once the input
	// has been read, so an input that does not read is refused for that,
	// also where no skills are installed.
	Catalog func() (engine.Catalog, error)
	Policy  engine.Policy
	// Workflows finds named workflows (a Dir, in both front ends).
	Workflows engine.WorkflowSource
	// MaxPlanBytes is the largest plan accepted; 0 or less leaves the
	// limit to parse's default.
	MaxPlanBytes int64

	BudgetUSD      float64
	Quorum         int
	ExcludeStarter bool
	// Oversight is who may decide besides the starter, and the
	// checkpoints' deadlines (engine.StartOptions.Oversight).
	Oversight engine.Oversight
	Setup     *engine.Setup // nil: the service's
}

// ErrNoWorkflows is returned for a workflow when Config names no place to
// find workflows in.
var ErrNoWorkflows = errors.New("no workflows directory: set GONOGO_WORKFLOWS_DIR")

// Take turns a request into the plan a run executes and the options it
// starts with, or refuses it. A refusal is an *engine.Refusal; a workflow
// with problems is one refusal that keeps every problem (Refusal.Problems),
// each with its line. Any other error is one of reading (the skills, the
// workflows directory) or a request no front end makes (no input kind).
//
// The plan comes back with a refusal too, as far as it was read (its
// input, source and flags at least, and whatever pre-flight found before
// it refused), for a front end that shows a refused input (gonogo check).
func Take(cfg Config, req Request) (engine.Plan, engine.StartOptions, error) {
	opt := engine.StartOptions{
		StartedBy: req.StartedBy, Origin: req.Origin, Key: req.Key,
		BudgetUSD: cfg.BudgetUSD, Quorum: cfg.Quorum, ExcludeStarter: cfg.ExcludeStarter, Setup: cfg.Setup,
		Oversight: cfg.Oversight,
	}
	var p engine.Plan
	var err error
	switch req.Input {
	case engine.InputPlan:
		p, err = takePlan(cfg, req)
	case engine.InputChain:
		p, err = takeChain(cfg, req)
	case engine.InputWorkflow:
		p, err = takeWorkflow(cfg, req)
	default:
		err = fmt.Errorf("intake: a request for input %q: want a plan, a chain or a workflow", req.Input)
	}
	return p, opt, err
}

func takePlan(cfg Config, req Request) (engine.Plan, error) {
	read := engine.Plan{Input: engine.InputPlan, Source: req.PlanName, Flags: req.Flags}
	if cfg.MaxPlanBytes > 0 && int64(len(req.Plan)) > cfg.MaxPlanBytes {
		return read, planOverLimit(cfg, req)
	}
	doc, err := parse.Plan(req.Plan, req.PlanName, parse.PlanOptions{MaxBytes: int(cfg.MaxPlanBytes)})
	if err != nil {
		return read, err
	}
	cat, err := cfg.Catalog()
	if err != nil {
		return read, err
	}
	return engine.PreflightPlan(doc, cat, cfg.Policy, req.Flags)
}

// planOverLimit refuses a plan over the size limit. A binary file is
// refused as one: raising the limit would not make it a plan.
func planOverLimit(cfg Config, req Request) error {
	if r := parse.PlanNotText(req.Plan, req.PlanName, int(cfg.MaxPlanBytes)); r != nil {
		return r
	}
	return planTooLarge(req.PlanName, req.PlanSize, cfg.MaxPlanBytes)
}

func takeChain(cfg Config, req Request) (engine.Plan, error) {
	read := engine.Plan{Input: engine.InputChain, Source: req.Chain, Flags: req.Flags}
	expr, err := parse.Chain(req.Chain)
	if err != nil {
		return read, err
	}
	expr.Flags = mergeFlags(expr.Flags, req.Flags)
	cat, err := cfg.Catalog()
	if err != nil {
		return read, err
	}
	return engine.PreflightChain(expr, cat, cfg.Policy)
}

func takeWorkflow(cfg Config, req Request) (engine.Plan, error) {
	// A refused workflow shows as what was asked for: pre-flight's partial
	// plan would name its context, which a refusal does not show.
	read := engine.Plan{Input: engine.InputWorkflow, Source: req.Workflow, Flags: req.Flags}
	if cfg.Workflows == nil {
		return read, ErrNoWorkflows
	}
	spec, err := cfg.Workflows.Workflow(req.Workflow)
	if err != nil {
		return read, workflowRefusal(err)
	}
	cat, err := cfg.Catalog()
	if err != nil {
		return read, err
	}
	p, err := engine.PreflightWorkflow(spec, req.Args, req.Context, req.Flags, cat, cfg.Policy)
	if err != nil {
		return read, workflowRefusal(err)
	}
	return p, nil
}

// mergeFlags sets each flag set in either a or b: a flag written in a chain
// and the same flag given beside it mean the same, and neither place can
// turn the other's off.
func mergeFlags(a, b engine.Flags) engine.Flags {
	return engine.Flags{Auto: a.Auto || b.Auto, ForceAuto: a.ForceAuto || b.ForceAuto, DryRun: a.DryRun || b.DryRun, Thread: a.Thread || b.Thread}
}

// workflowRefusal turns every problem found in a workflow into one refusal
// (reason invalid-workflow) that keeps them all, each with its line, and
// lists them in its message. Any other error is returned as it is.
func workflowRefusal(err error) error {
	var ps *engine.Problems
	if !errors.As(err, &ps) {
		return err
	}
	ref := &engine.Refusal{Reason: engine.RefuseInvalidWorkflow, Source: ps.Source,
		Message: strings.TrimPrefix(ps.Error(), ps.Source+": "), Problems: ps.List}
	if len(ps.List) > 0 {
		ref.Line = ps.List[0].Line
	}
	if len(ps.List) == 1 {
		// One problem: its line is the refusal's, said once.
		ref.Message = ps.List[0].Message
	}
	if r, ok := sharedReason(ps.List); ok {
		ref.Reason = r
	}
	return ref
}

// sharedReason is the more specific kind (missing arguments) every problem
// of list is of, if there is one: the refusal is then of that kind.
func sharedReason(list []engine.Problem) (engine.RefusalReason, bool) {
	if len(list) == 0 {
		return "", false
	}
	for _, p := range list {
		if p.Reason == "" || p.Reason != list[0].Reason {
			return "", false
		}
	}
	return list[0].Reason, true
}

// planTooLarge refuses a plan over the size limit with its real size when
// it is known, the limit, and how to raise it.
func planTooLarge(name string, size, limit int64) error {
	what, raise := "larger than that", 2*limit
	if size > 0 {
		what = fmt.Sprintf("%s (%d bytes)", humanBytes(size), size)
		raise = 1 << 20
		for raise < size {
			raise *= 2
		}
	}
	return &engine.Refusal{Reason: engine.RefuseInvalidInput, Source: name,
		Message: fmt.Sprintf("the plan is %s, over the %s (%d bytes) limit; raise it with --max-plan-bytes %s or GONOGO_MAX_PLAN_BYTES=%s",
			what, humanBytes(limit), limit, humanBytes(raise), humanBytes(raise))}
}

// humanBytes writes a size the way GONOGO_MAX_* read it: 512KiB, 1MiB,
// 2.6MiB, 900B.
func humanBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size {
			if n%u.size == 0 {
				return fmt.Sprintf("%d%s", n/u.size, u.name)
			}
			return fmt.Sprintf("%.1f%s", float64(n)/float64(u.size), u.name)
		}
	}
	return fmt.Sprintf("%dB", n)
}

// Chain reads a chain expression as Take does, for a front end that
// checks a command when it arrives (a slash command's syntax is refused in
// the ack) and starts it later through Take.
func Chain(text string) (engine.ChainExpr, error) { return parse.Chain(text) }

// IsPlan reports whether body reads as an action plan with a Section 7,
// the blocks a plan run executes: what tells the plan among several files
// a person attached.
func IsPlan(body []byte, name string) bool {
	doc, err := parse.Plan(body, name, parse.PlanOptions{MaxBytes: len(body) + 1})
	return err == nil && doc.HasSection7
}
