package main

import (
	"errors"
	"fmt"
	"io"
	"os"

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
		return in, usagef("named workflows are not available in this version of gonogo (--workflow %s)", f.workflow)
	case f.chainSet:
		in.kind = engine.InputChain
		expr, err := parse.Chain(f.chain)
		if err != nil {
			in.plan = engine.Plan{Input: engine.InputChain, Source: f.chain, Flags: f.Flags}
			return in, err
		}
		expr.Flags = mergeFlags(expr.Flags, f.Flags)
		cat, err := parse.LoadSkills(f.skills)
		if err != nil {
			return in, err
		}
		in.catalog = cat
		in.plan, err = engine.PreflightChain(expr, cat, pol)
		return in, err
	default:
		in.kind = engine.InputPlan
		path := f.positional[0]
		src, err := readLimited(path, int64(f.maxPlanBytes))
		if err != nil {
			return in, err
		}
		doc, err := parse.Plan(src, path, parse.PlanOptions{MaxBytes: int(f.maxPlanBytes)})
		if err != nil {
			in.plan = engine.Plan{Input: engine.InputPlan, Source: path, Flags: f.Flags}
			return in, err
		}
		cat, err := parse.LoadSkills(f.skills)
		if err != nil {
			return in, err
		}
		in.catalog = cat
		in.plan, err = engine.PreflightPlan(doc, cat, pol, f.Flags)
		return in, err
	}
}

// readLimited reads a file, but never more than one byte past limit: the
// parser then refuses it as too large without gonogo holding all of it.
func readLimited(path string, limit int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("plan file %s does not exist", path)
		}
		return nil, fmt.Errorf("read plan: %w", err)
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a plan file", path)
	}
	b, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read plan %s: %w", path, err)
	}
	return b, nil
}

// refusal returns err as a refusal, if it is one.
func refusal(err error) (*engine.Refusal, bool) {
	var r *engine.Refusal
	ok := errors.As(err, &r)
	return r, ok
}
