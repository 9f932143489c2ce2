package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

// input is what a run starts from, after pre-flight.
type input struct {
	kind    engine.InputKind
	plan    engine.Plan
	catalog engine.Catalog
	policy  engine.Policy
}

// loadInput reads the plan file, chain or workflow the flags name, with the
// installed skills and the policy, and runs pre-flight. A refusal comes
// back as *engine.Refusal (with whatever the plan revealed before it);
// anything else is an I/O or configuration error.
func loadInput(f *runFlags, cfg config) (input, error) {
	in := input{}
	dryRunner(f)
	if err := oneOf(f); err != nil {
		return in, err
	}
	pol, err := parse.LoadPolicy(cfg.Policy)
	if err != nil {
		return in, fmt.Errorf("policy: %w", err)
	}
	in.policy = pol
	switch {
	case f.workflow != "":
		in.kind = engine.InputWorkflow
		in.plan = engine.Plan{Input: engine.InputWorkflow, Source: f.workflow, Flags: f.Flags}
		args, err := workflowArgs(f.args)
		if err != nil {
			return in, err
		}
		spec, err := parse.LoadWorkflow(cfg.WorkflowsDir, f.workflow)
		if err != nil {
			return in, asRefusal(err)
		}
		cat, err := cfg.loadSkills(f.skills)
		if err != nil {
			return in, err
		}
		in.catalog = cat
		p, err := engine.PreflightWorkflow(spec, args, f.context, f.Flags, cat, pol)
		if err != nil {
			return in, asRefusal(err)
		}
		in.plan = p
		return in, nil
	case f.chainSet:
		in.kind = engine.InputChain
		expr, err := parse.Chain(f.chain)
		if err != nil {
			in.plan = engine.Plan{Input: engine.InputChain, Source: f.chain, Flags: f.Flags}
			return in, err
		}
		expr.Flags = mergeFlags(expr.Flags, f.Flags)
		cat, err := cfg.loadSkills(f.skills)
		if err != nil {
			return in, err
		}
		in.catalog = cat
		in.plan, err = engine.PreflightChain(expr, cat, pol)
		return in, err
	default:
		in.kind = engine.InputPlan
		path := f.positional[0]
		src, err := readLimited(path, int64(f.maxPlanBytes), "plan file")
		if err != nil {
			return in, err
		}
		if int64(len(src)) > int64(f.maxPlanBytes) {
			in.plan = engine.Plan{Input: engine.InputPlan, Source: path, Flags: f.Flags}
			return in, planTooLarge(path, int64(f.maxPlanBytes))
		}
		doc, err := parse.Plan(src, path, parse.PlanOptions{MaxBytes: int(f.maxPlanBytes)})
		if err != nil {
			in.plan = engine.Plan{Input: engine.InputPlan, Source: path, Flags: f.Flags}
			return in, err
		}
		cat, err := cfg.loadSkills(f.skills)
		if err != nil {
			return in, err
		}
		in.catalog = cat
		in.plan, err = engine.PreflightPlan(doc, cat, pol, f.Flags)
		return in, err
	}
}

// readLimited reads a file, but never more than one byte past limit, so
// gonogo never holds all of a file that is too large. what names the file
// in errors ("plan file", "edit file").
func readLimited(path string, limit int64, what string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s %s does not exist", what, path)
		}
		return nil, fmt.Errorf("read the %s: %w", what, err)
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a %s", path, what)
	}
	b, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read the %s %s: %w", what, path, err)
	}
	return b, nil
}

// planTooLarge refuses a plan over the size limit with its real size (a
// regular file's, from its metadata), the limit, and how to raise it.
func planTooLarge(path string, limit int64) error {
	size, raise := "larger than that", 2*limit
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		size = fmt.Sprintf("%s (%d bytes)", humanBytes(fi.Size()), fi.Size())
		raise = 1 << 20
		for raise < fi.Size() {
			raise *= 2
		}
	}
	return &engine.Refusal{Reason: engine.RefuseInvalidInput, Source: path,
		Message: fmt.Sprintf("the plan is %s, over the %s (%d bytes) limit; raise it with --max-plan-bytes %s or GONOGO_MAX_PLAN_BYTES=%s",
			size, humanBytes(limit), limit, humanBytes(raise), humanBytes(raise))}
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

// workflowArgs reads --arg k=v flags.
func workflowArgs(list []string) (map[string]string, error) {
	args := map[string]string{}
	for _, a := range list {
		k, v, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usagef("--arg %q: expected NAME=VALUE", a)
		}
		if _, dup := args[k]; dup {
			return nil, usagef("--arg %s given twice", k)
		}
		args[k] = v
	}
	return args, nil
}

// asRefusal turns every problem found in a workflow into one refusal
// (reason invalid-workflow) that lists them all, each with its line.
func asRefusal(err error) error {
	var ps *engine.Problems
	if !errors.As(err, &ps) {
		return err
	}
	ref := &engine.Refusal{Reason: engine.RefuseInvalidWorkflow, Source: ps.Source, Message: strings.TrimPrefix(ps.Error(), ps.Source+": ")}
	if len(ps.List) > 0 {
		ref.Line = ps.List[0].Line
	}
	if len(ps.List) == 1 {
		// One problem: its line is the refusal's, said once.
		ref.Message = ps.List[0].Message
	}
	// Problems that are all of one more specific kind (missing arguments)
	// are refused as that.
	same := len(ps.List) > 0
	for _, p := range ps.List {
		same = same && p.Reason != "" && p.Reason == ps.List[0].Reason
	}
	if same {
		ref.Reason = ps.List[0].Reason
	}
	return ref
}

// refusal returns err as a refusal, if it is one.
func refusal(err error) (*engine.Refusal, bool) {
	var r *engine.Refusal
	ok := errors.As(err, &r)
	return r, ok
}
